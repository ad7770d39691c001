"""torch_cpu.py (bench) -- PyTorch eager on the CPU, doing what the kit's
benches time, for grader/bench/vs-torch.sh to set side by side.

    python3 torch_cpu.py WORKLOAD [--threads N] [--reps N]

WORKLOAD (each prints one JSON line: {"workload": ..., "ms": median, ...}):
  step    lab 05's training step: the MLP 784-512x4-10 (ReLU), batch 4096,
          softmax cross-entropy, SGD with momentum 0.9 and weight decay 5e-4
          (build/bench/step's model and optimizer), fp32
  ddp2    the same step in DistributedDataParallel on 2 processes over gloo,
          one thread each, batch 4096 per rank (the kit: dlrun -n 2 lab05)
  lab01   lab 01's full-batch epoch on 200000 x 500 (synthetic): 120000
          training rows, 40000 validation rows (the kit's 60/20/20 split);
          an epoch is one gradient step and the record the kit's reference
          keeps (training loss and gradient, validation loss and accuracy);
          BCE with logits, L2 0.01 on the weights
  lab02   lab 02's softmax-regression epoch: 60000 x 784 rows, batch 128 in a
          new random order, lr 0.2, no L2, one thread (build/bench/lab02)

Threads are set as the kit's runs have them (--threads: torch.set_num_threads).
Subnormals are flushed (torch.set_flush_denormal), as the kit's BLAS does: the
comparison is of the arithmetic, not of one side's slow path. Not part of the
kit: PyTorch is needed only where this bench runs.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch


def mlp(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def timed(fn, reps, warmup=2):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(ts)


def step(args):
    torch.manual_seed(1)
    model = mlp([784, 512, 512, 512, 512, 10])
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, weight_decay=5e-4)
    X = torch.rand(4096, 784)
    y = torch.randint(0, 10, (4096,))

    def one():
        opt.zero_grad(set_to_none=False)
        torch.nn.functional.cross_entropy(model(X), y).backward()
        opt.step()

    return {"ms": timed(one, args.reps)}


def ddp_rank(rank, world, port, reps, out):
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(1)
    model = torch.nn.parallel.DistributedDataParallel(mlp([784, 512, 512, 512, 512, 10]))
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, weight_decay=5e-4)
    X = torch.rand(4096, 784)
    y = torch.randint(0, 10, (4096,))

    def one():
        opt.zero_grad(set_to_none=False)
        torch.nn.functional.cross_entropy(model(X), y).backward()
        opt.step()

    ms = timed(one, reps)
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"ms": ms}, f)
    dist.destroy_process_group()


def ddp2(args):
    import tempfile

    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r0.json")
        port = 29500 + os.getpid() % 1000
        mp.spawn(ddp_rank, args=(2, port, args.reps, out), nprocs=2, join=True)
        with open(out) as f:
            r = json.load(f)
    torch.set_num_threads(1)  # what each rank had
    return r


def lab01(args):
    g = torch.Generator().manual_seed(1)
    n_tr, n_val, d, lam, lr = 120000, 40000, 500, 0.01, 1.0
    w_true = torch.randn(d, generator=g)
    X = torch.randn(n_tr + n_val, d, generator=g)
    y = (X @ w_true + 0.5 * torch.randn(n_tr + n_val, generator=g) > 0).float()
    Xtr, ytr, Xv, yv = X[:n_tr], y[:n_tr], X[n_tr:], y[n_tr:]
    w = torch.zeros(d, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)

    def record():  # the training loss and gradient, the validation loss and accuracy
        w.grad = None
        b.grad = None
        loss = torch.nn.functional.binary_cross_entropy_with_logits(Xtr @ w + b, ytr) + 0.5 * lam * (w * w).sum()
        loss.backward()
        with torch.no_grad():
            zv = Xv @ w + b
            torch.nn.functional.binary_cross_entropy_with_logits(zv, yv).item()
            ((zv > 0).float() == yv).float().mean().item()
            torch.sqrt((w.grad * w.grad).sum() + b.grad * b.grad).item()

    def epoch():
        with torch.no_grad():
            w.sub_(lr * w.grad)
            b.sub_(lr * b.grad)
        record()

    record()
    return {"ms": timed(epoch, args.reps)}


def lab02(args):
    g = torch.Generator().manual_seed(1)
    n, d, C, bs, lr = 60000, 784, 10, 128, 0.2
    X = torch.rand(n, d, generator=g)
    y = torch.randint(0, C, (n,), generator=g)
    W = torch.zeros(C, d, requires_grad=True)
    b = torch.zeros(C, requires_grad=True)

    def epoch():
        order = torch.randperm(n, generator=g)
        for s in range(0, n, bs):
            idx = order[s:s + bs]
            loss = torch.nn.functional.cross_entropy(X[idx] @ W.t() + b, y[idx])
            W.grad = None
            b.grad = None
            loss.backward()
            with torch.no_grad():
                W.sub_(lr * W.grad)
                b.sub_(lr * b.grad)

    return {"ms": timed(epoch, args.reps, warmup=1)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workload", choices=["step", "ddp2", "lab01", "lab02"])
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (default: torch's own)")
    p.add_argument("--reps", type=int, default=8)
    args = p.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.set_flush_denormal(True)
    r = {"step": step, "ddp2": ddp2, "lab01": lab01, "lab02": lab02}[args.workload](args)
    r.update(workload=args.workload, torch=torch.__version__, threads=torch.get_num_threads())
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
