// A FIFO ring buffer that grows by doubling and never shrinks: after warm-up, pushing and
// popping allocate nothing. It starts small: a FIFO cycles through its whole capacity, so one
// that holds an item or two at a time (most of a system's channels) keeps its slots in the cache
// only if its capacity is about what it holds.
#pragma once
#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>

namespace xy {

template <class T>
class Ring {
 public:
  explicit Ring(std::size_t capacity = 2)
      : buf_(std::make_unique<T[]>(round_up(capacity))), mask_(static_cast<std::uint32_t>(round_up(capacity) - 1)) {}
  Ring(const Ring& o)
      : buf_(std::make_unique<T[]>(o.mask_ + std::size_t{1})), popped_(o.popped_), mask_(o.mask_), size_(o.size_) {
    std::copy(o.buf_.get(), o.buf_.get() + mask_ + 1, buf_.get());
  }
  Ring& operator=(Ring o) {
    std::swap(buf_, o.buf_);
    std::swap(popped_, o.popped_);
    std::swap(mask_, o.mask_);
    std::swap(size_, o.size_);
    return *this;
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { assert(size_); return buf_[popped_ & mask_]; }
  const T& front() const { assert(size_); return buf_[popped_ & mask_]; }
  const T& operator[](std::size_t i) const { return buf_[(popped_ + i) & mask_]; }
  void push(T v) {
    if (size_ > mask_) grow();
    buf_[(popped_ + size_) & mask_] = std::move(v);
    ++size_;
  }
  T pop() {
    assert(size_);
    T v = std::move(buf_[popped_ & mask_]);
    ++popped_;
    --size_;
    return v;
  }
  void clear() { size_ = 0; }
  // Items popped since the ring was made (the head's index before masking).
  std::uint64_t popped() const { return popped_; }

 private:
  static std::size_t round_up(std::size_t n) {
    std::size_t c = 1;
    while (c < n) c <<= 1;
    if (c > (std::size_t{1} << 31)) throw std::length_error("Ring: more than 2^31 items");
    return c;
  }
  void grow() {
    const std::size_t capacity = round_up(2 * (std::size_t{mask_} + 1));
    auto b = std::make_unique<T[]>(capacity);
    for (std::size_t i = 0; i < size_; ++i) b[(popped_ + i) & (capacity - 1)] = std::move(buf_[(popped_ + i) & mask_]);
    buf_ = std::move(b);
    mask_ = static_cast<std::uint32_t>(capacity - 1);
  }
  std::unique_ptr<T[]> buf_;  // 24 bytes in all with the indices
  std::uint64_t popped_ = 0;  // the head is popped_ & mask_
  std::uint32_t mask_;        // capacity - 1 (a power of two), kept rather than derived on every access
  std::uint32_t size_ = 0;
};

}  // namespace xy
