"""Shared helpers for clink's kernel tests (jupyter_client against the real
kernel binary, installed by scripts/test-kernel as kernelspec "clink")."""
import queue
import time

from jupyter_client.manager import KernelManager

KERNEL = "clink"
TIMEOUT = 30


def start():
    km = KernelManager(kernel_name=KERNEL)
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=TIMEOUT)
    return km, kc


def stop(km, kc):
    kc.stop_channels()
    km.shutdown_kernel(now=False)


def drain_iopub(kc, wait=0.2):
    while True:
        try:
            kc.get_iopub_msg(timeout=wait)
        except queue.Empty:
            return


def collect(kc, msg_id, timeout=TIMEOUT):
    """iopub messages of request msg_id from busy to idle (both included)."""
    out = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            break
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        out.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return out
    raise AssertionError(f"no idle status for {msg_id} within {timeout}s; got {[m['msg_type'] for m in out]}")


def shell_reply(kc, msg_id, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
        if msg["parent_header"].get("msg_id") == msg_id:
            return msg
    raise AssertionError(f"no shell reply for {msg_id}")


def run(kc, code, timeout=TIMEOUT, **kw):
    """Execute code; return (reply, iopub messages busy..idle)."""
    msg_id = kc.execute(code, **kw)
    reply = shell_reply(kc, msg_id, timeout)
    return reply, collect(kc, msg_id, timeout)


def of_type(msgs, t):
    return [m for m in msgs if m["msg_type"] == t]
