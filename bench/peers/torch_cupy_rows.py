"""torch.cumsum(dim=-1) / cupy.cumsum(axis=1) (rows) and torch.cumsum(dim=0) /
cupy.cumsum(axis=0) (columns) over the rows x cols shapes of
`scangen bench --variants` (2^N elements in all), each beside a device copy of the same bytes in
the same run (CUDA events, median of 25 after 3 warm-ups). Usage: python3 torch_cupy_rows.py 28"""
import statistics
import sys

import torch

log2n = int(sys.argv[1]) if len(sys.argv) > 1 else 28


def timed(fn, reps=25, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    # Slow peers (tens of ms a call) get fewer repetitions, so a whole table fits a session.
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    fn()
    b.record()
    b.synchronize()
    if a.elapsed_time(b) > 20.0:
        reps = 3
    out = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b))
    return statistics.median(out)


try:
    import cupy
except Exception:  # noqa: BLE001
    cupy = None

print(f"device: {torch.cuda.get_device_name(0)}")
print("| shape | dtype | torch.cumsum(dim=-1) | cupy.cumsum(axis=1) | torch.cumsum(dim=0) | cupy.cumsum(axis=0) |")
print("|---|---|---|---|---|---|")
for dtype in (torch.int32, torch.float32):
    for r in (0, 4, 8, 14, 20, 24):
        rows, cols = 1 << r, 1 << (log2n - r)
        x = (torch.arange(rows * cols, device="cuda") % 7 - 3).to(dtype).reshape(rows, cols)
        y = torch.empty_like(x)
        dst = torch.empty_like(x)
        copy = timed(lambda: dst.copy_(x))
        t = timed(lambda: torch.cumsum(x, dim=-1, out=y))
        cells = [f"{copy / t:.3f}", "n/a", "", "n/a"]
        t0 = timed(lambda: torch.cumsum(x, dim=0, out=y))
        cells[2] = f"{copy / t0:.3f}"
        if cupy is not None:
            cx = cupy.asarray(x)
            cy = cupy.empty_like(cx)
            c = timed(lambda: cupy.cumsum(cx, axis=1, out=cy))
            cells[1] = f"{copy / c:.3f}"
            c0 = timed(lambda: cupy.cumsum(cx, axis=0, out=cy))
            cells[3] = f"{copy / c0:.3f}"
        print(f"| {rows} x {cols} | {str(dtype).split('.')[-1]} | " + " | ".join(cells) + " |")
