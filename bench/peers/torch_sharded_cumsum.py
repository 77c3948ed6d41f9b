"""The torch peer of `examples/sharded_bench.rs`: a scan of int32 data sharded over every GPU of
the machine, the way a torch user writes it today. Each rank runs `torch.cumsum` over its shard,
all-gathers the shard totals over NCCL, and adds the sum of the preceding ranks' totals.

    NCCL_NVLS_ENABLE=0 python3 torch_sharded_cumsum.py 16,20,24,26,28,30 20

Prints, per shard size and rank, the median time of the sharded cumsum and of a device copy of
the same shard (same process, same GPU), their ratio (copy / scan: 1.0 would be copy speed), and
the all-gather of one total alone. One process per GPU (torch.multiprocessing, NCCL backend).
"""

import os
import sys


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def timed(torch, dist, fn, reps):
    """Median milliseconds of fn() on this rank's stream, ranks lined up by a barrier."""
    samples = []
    for rep in range(reps + 2):
        dist.barrier()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        if rep >= 2:
            samples.append(start.elapsed_time(end))
    return median(samples)


def worker(rank, world, log2s, reps, port):
    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    rows = []
    for log2 in log2s:
        n = 1 << log2
        x = torch.randint(-1000, 1000, (n,), dtype=torch.int32, device="cuda")
        y = torch.empty_like(x)
        totals = torch.empty(world, dtype=torch.int32, device="cuda")

        def sharded():
            torch.cumsum(x, 0, dtype=torch.int32, out=y)
            dist.all_gather_into_tensor(totals, y[-1:])
            if rank > 0:
                y.add_(totals[:rank].sum(dtype=torch.int32))

        def copy():
            y.copy_(x)

        def gather():
            dist.all_gather_into_tensor(totals, y[-1:])

        # Check once against the whole array's cumsum (gathered on rank 0 only for small sizes).
        sharded()
        if n <= 1 << 24:
            parts = [torch.empty_like(x) for _ in range(world)]
            dist.all_gather(parts, x)
            whole = torch.cumsum(torch.cat(parts), 0, dtype=torch.int32)
            ok = torch.equal(whole[rank * n:(rank + 1) * n], y)
        else:
            ok = None
        t_scan = timed(torch, dist, sharded, reps)
        t_copy = timed(torch, dist, copy, reps)
        t_gather = timed(torch, dist, gather, reps)
        rows.append((log2, rank, t_scan * 1e3, t_copy * 1e3, t_copy / t_scan, t_gather * 1e3, ok))
        del x, y
        torch.cuda.empty_cache()
    gathered = [None] * world
    dist.all_gather_object(gathered, rows)
    if rank == 0:
        print(f"torch {torch.__version__}, {world} x {torch.cuda.get_device_name(0)}")
        print(f"{'shard':>6} {'rank':>5} {'sharded us':>11} {'copy us':>10} {'fraction':>9} "
              f"{'gather us':>10} {'checked':>8}")
        for i in range(len(log2s)):
            for r in range(world):
                log2, rk, s, c, f, g, ok = gathered[r][i]
                print(f"{'2^%d' % log2:>6} {rk:>5} {s:>11.1f} {c:>10.1f} {f:>9.3f} {g:>10.1f} "
                      f"{str(ok):>8}")
    dist.destroy_process_group()


def main():
    import torch
    import torch.multiprocessing as mp

    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    log2s = [int(s) for s in (sys.argv[1] if len(sys.argv) > 1 else "16,20,24,26,28,30").split(",")]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    world = torch.cuda.device_count()
    if world < 1:
        print("torch_sharded_cumsum: no GPU")
        return
    port = 29500 + os.getpid() % 1000
    mp.spawn(worker, args=(world, log2s, reps, port), nprocs=world, join=True)


if __name__ == "__main__":
    main()
