package cuda

/*
#include "trampolines.h"
*/
import "C"

import "fmt"

// errorPeerAccessAlreadyEnabled is CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED.
const errorPeerAccessAlreadyEnabled = 704

// EnablePeerAccess lets c reach peer's memory directly (over NVLink or
// PCIe) where the hardware allows, which turns CopyPeer from a copy staged
// through the host into one DMA. It reports whether access is enabled; a
// pair of GPUs without a direct path is not an error.
func (c *Context) EnablePeerAccess(peer *Context) (bool, error) {
	var can C.int
	if err := c.drv.check("cuDeviceCanAccessPeer", C.hs_canAccessPeer(c.drv.cuDeviceCanAccessPeer, &can, c.dev, peer.dev)); err != nil {
		return false, fmt.Errorf("GPU %d to GPU %d: %w", c.info.Ordinal, peer.info.Ordinal, err)
	}
	if can == 0 {
		return false, nil
	}
	err := c.Do(func() error {
		r := C.hs_enablePeer(c.drv.cuCtxEnablePeerAccess, peer.ctx, 0)
		if r == errorPeerAccessAlreadyEnabled {
			return nil
		}
		return c.drv.check("cuCtxEnablePeerAccess", r)
	})
	if err != nil {
		return false, fmt.Errorf("GPU %d to GPU %d: %w", c.info.Ordinal, peer.info.Ordinal, err)
	}
	return true, nil
}

// CopyPeer copies bytes from src at byte srcOff to dst at byte dstOff,
// between the memory of two GPUs (or within one). Work already queued in
// either context finishes first, and work queued later waits for the copy.
func CopyPeer(dst *Buffer, dstOff int64, src *Buffer, srcOff int64, bytes int64) error {
	if bytes < 0 || dstOff < 0 || srcOff < 0 || dstOff+bytes > dst.bytes || srcOff+bytes > src.bytes {
		return fmt.Errorf("peer copy of %d bytes from offset %d of %d to offset %d of %d: out of range",
			bytes, srcOff, src.bytes, dstOff, dst.bytes)
	}
	if bytes == 0 {
		return nil
	}
	c := dst.ctx
	return c.Do(func() error {
		return c.drv.check("cuMemcpyPeer", C.hs_peer(c.drv.cuMemcpyPeer, C.CUdeviceptr(dst.ptr+DevicePtr(dstOff)), dst.ctx.ctx,
			C.CUdeviceptr(src.ptr+DevicePtr(srcOff)), src.ctx.ctx, C.size_t(bytes)))
	})
}

// CopyPeerAsync queues on s, a stream of dst's context (nil: its default
// stream), the copy of bytes from src at byte srcOff to dst at byte
// dstOff, and returns at once. Unlike CopyPeer it is ordered with nothing
// but s: the caller orders it after src's writes (s waiting on an event of
// src's context) and before dst's readers (an event recorded on s).
func CopyPeerAsync(dst *Buffer, dstOff int64, src *Buffer, srcOff int64, bytes int64, s *Stream) error {
	if bytes < 0 || dstOff < 0 || srcOff < 0 || dstOff+bytes > dst.bytes || srcOff+bytes > src.bytes {
		return fmt.Errorf("asynchronous peer copy of %d bytes from offset %d of %d to offset %d of %d: out of range",
			bytes, srcOff, src.bytes, dstOff, dst.bytes)
	}
	if s != nil && s.ctx != dst.ctx {
		return fmt.Errorf("asynchronous peer copy to GPU %d on a stream of GPU %d", dst.ctx.info.Ordinal, s.ctx.info.Ordinal)
	}
	if bytes == 0 {
		return nil
	}
	c := dst.ctx
	return c.Do(func() error {
		return c.drv.check("cuMemcpyPeerAsync", C.hs_peerAsync(c.drv.cuMemcpyPeerAsync, C.CUdeviceptr(dst.ptr+DevicePtr(dstOff)), dst.ctx.ctx,
			C.CUdeviceptr(src.ptr+DevicePtr(srcOff)), src.ctx.ctx, C.size_t(bytes), s.handle()))
	})
}
