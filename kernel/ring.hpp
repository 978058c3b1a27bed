// A FIFO ring buffer that grows by doubling and never shrinks: after warm-up, pushing and
// popping allocate nothing.
#pragma once
#include <algorithm>
#include <cassert>
#include <cstddef>
#include <memory>

namespace xy {

template <class T>
class Ring {
 public:
  explicit Ring(std::size_t capacity = 16)
      : buf_(std::make_unique<T[]>(round_up(capacity))), mask_(round_up(capacity) - 1) {}
  Ring(const Ring& o) : buf_(std::make_unique<T[]>(o.mask_ + 1)), mask_(o.mask_), head_(o.head_), size_(o.size_) {
    std::copy(o.buf_.get(), o.buf_.get() + mask_ + 1, buf_.get());
  }
  Ring& operator=(Ring o) {
    std::swap(buf_, o.buf_);
    std::swap(mask_, o.mask_);
    std::swap(head_, o.head_);
    std::swap(size_, o.size_);
    return *this;
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { assert(size_); return buf_[head_]; }
  const T& front() const { assert(size_); return buf_[head_]; }
  const T& operator[](std::size_t i) const { return buf_[(head_ + i) & mask_]; }
  void push(T v) {
    if (size_ > mask_) grow();
    buf_[(head_ + size_) & mask_] = std::move(v);
    ++size_;
  }
  T pop() {
    assert(size_);
    T v = std::move(buf_[head_]);
    head_ = (head_ + 1) & mask_;
    --size_;
    return v;
  }
  void clear() { head_ = size_ = 0; }

 private:
  static std::size_t round_up(std::size_t n) {
    std::size_t c = 1;
    while (c < n) c <<= 1;
    return c;
  }
  void grow() {
    const std::size_t capacity = 2 * (mask_ + 1);
    auto b = std::make_unique<T[]>(capacity);
    for (std::size_t i = 0; i < size_; ++i) b[i] = std::move(buf_[(head_ + i) & mask_]);
    buf_ = std::move(b);
    mask_ = capacity - 1;
    head_ = 0;
  }
  std::unique_ptr<T[]> buf_;  // 32 bytes in all with the indices: half a cache line
  std::size_t mask_;  // capacity - 1 (a power of two), kept rather than derived on every access
  std::size_t head_ = 0, size_ = 0;
};

}  // namespace xy
