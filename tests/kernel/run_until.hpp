// Steps clocks by hand, without SystemC, for the kernel's tests.
#pragma once
#include <vector>

#include "kernel/clock.hpp"

namespace xy::testing {

// Steps several clocks in time order, like the SystemC shells do (ties: any order).
inline void run_until(std::vector<Clock*> clocks, Time end) {
  for (;;) {
    Clock* next = nullptr;
    for (Clock* c : clocks)
      if (c->has_work() && c->time_of(c->next_due()) <= end &&
          (!next || c->time_of(c->next_due()) < next->time_of(next->next_due())))
        next = c;
    if (!next) return;
    next->step();
  }
}

}  // namespace xy::testing
