# Run at every build (cmake -DSRC=... -DOUT=... -P git_commit.cmake): writes OUT with the source
# tree's git commit, "-dirty" when it has changes, and touches OUT only when that changes, so an
# unchanged tree rebuilds nothing. Outside a git checkout the commit is "unknown".
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=40
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
endif()
file(WRITE "${OUT}.new" "namespace xy {\nconst char* git_commit() { return \"${commit}\"; }\n}  // namespace xy\n")
file(COPY_FILE "${OUT}.new" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.new")
