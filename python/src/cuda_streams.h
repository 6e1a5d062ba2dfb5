// Stream ordering of CUDA pictures handed to other libraries (DLPack, __cuda_array_interface__),
// through the CUDA driver library opened at run time: the extension never links CUDA, and on a
// machine without a driver none of this is reached (there are no CUDA pictures).
//
// The protocols (array API standard for __dlpack__, CUDA Array Interface v3):
// - Before the consumer reads: its stream waits (device-side) for an event recorded after
//   pixpath's write (consumer_waits), or the consumer synchronises on a stream pixpath gives it
//   (export_stream_after, for __cuda_array_interface__'s "stream").
// - Before the memory is reused: the consumer's kernels may still be queued when it drops the
//   tensor (PyTorch calls the DLPack deleter as soon as the tensor's last reference goes). The
//   deleter records an event on the consumer's stream and hands the picture to one releaser
//   thread (release_after_stream), which waits for that event and only then drops the picture:
//   its storage goes back to pixpath's pool after the consumer's work, not merely after
//   pixpath's own.
#pragma once

#include <cstdint>
#include <optional>

#include "pixpath/core/picture.h"
#include "pixpath/core/result.h"

namespace pixpath::python {

// The consumer's stream as __dlpack__ takes it: None = legacy default (1), 1 legacy default,
// 2 per-thread default, -1 no synchronisation, anything else a cudaStream_t / CUstream handle.
// Makes that stream wait for the picture's pending write; where the driver refuses, the host
// waits instead. Call without the GIL held (it may block on the host).
Result<void> consumer_waits(const Picture& p, int64_t stream);

// A stream (as an integer handle for __cuda_array_interface__) that waits for the picture's
// pending write: one non-blocking stream per CUDA context, made on first use. nullopt: no wait
// is needed (no pending write) or the driver refused (then the host has waited).
Result<std::optional<uintptr_t>> export_stream_after(const Picture& p);

// Drops `p` once the work queued so far on `stream` (the handle given to __dlpack__; 1 and 2 are
// taken as the legacy default stream, which every blocking stream of the context orders with)
// is done, without blocking the caller. Where the driver refuses, the caller's thread waits for
// the stream and drops it at once. Safe on any thread, with or without the GIL.
void release_after_stream(Picture p, int64_t stream);

// Pictures handed to release_after_stream and not yet dropped.
int64_t pending_stream_releases();

}  // namespace pixpath::python
