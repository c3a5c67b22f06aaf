"""The study's MAP training in PyTorch, for the side-by-side in benches/README.md.

The same network (d=8 -> 64 -> 64 -> 2, ReLU, mean and log variance, variance clamped to
[1e-3, 1e3]), loss (batch-mean Gaussian NLL), optimiser (torch.optim.Adam, lr 1e-3, weight
decay 1e-5), batch size 32 reshuffled every epoch, 500 epochs on n = 100 points of the study's
synthetic model; the idiomatic eager loop. Prints the median and best of REPEATS wall times
(training only), with 1 thread (the per-core comparison: credence trains single-threaded and
parallelises across jobs) and with torch's default thread count.

    benches/.venv/bin/pip install -r benches/requirements-training.txt
    benches/.venv/bin/python benches/compare_training.py --repeats 5
"""

import argparse
import json
import math
import statistics
import time

import torch


def synthetic(n, seed):
    g = torch.Generator().manual_seed(seed)
    w = torch.tensor([1.5, -2.0, 0.5, 1.0, -0.5, 0.3, -1.2, 0.8])
    x = torch.randn(n, 8, generator=g)
    y = x @ w + (0.3 + 0.5 * x[:, 0].abs()) * torch.randn(n, generator=g)
    return x, (y - y.mean()) / y.std(unbiased=False)


def train(x, y, epochs, batch, seed):
    torch.manual_seed(seed)
    net = torch.nn.Sequential(
        torch.nn.Linear(x.shape[1], 64), torch.nn.ReLU(),
        torch.nn.Linear(64, 64), torch.nn.ReLU(),
        torch.nn.Linear(64, 2),
    )
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-5)
    n = x.shape[0]
    for _ in range(epochs):
        perm = torch.randperm(n)
        for i in range(0, n, batch):
            idx = perm[i:i + batch]
            out = net(x[idx])
            mu, var = out[:, 0], out[:, 1].exp().clamp(1e-3, 1e3)
            loss = 0.5 * (var.log() + (y[idx] - mu) ** 2 / var).mean() + 0.5 * math.log(2 * math.pi)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return net


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--epochs", type=int, default=500)
    args = ap.parse_args()
    x, y = synthetic(args.n, 1)
    tx, ty = synthetic(360, 2)
    default_threads = torch.get_num_threads()
    for threads in (1, default_threads):
        torch.set_num_threads(threads)
        times = []
        for r in range(args.repeats):
            t = time.perf_counter()
            net = train(x, y, args.epochs, 32, r)
            times.append(time.perf_counter() - t)
        with torch.no_grad():
            out = net(tx)
            var = out[:, 1].exp().clamp(1e-3, 1e3)
            nll = (0.5 * (var.log() + (ty - out[:, 0]) ** 2 / var) + 0.5 * math.log(2 * math.pi)).mean()
        print(json.dumps({
            "what": "map", "framework": f"torch {torch.__version__}", "threads": threads, "n": args.n,
            "epochs": args.epochs, "median_s": round(statistics.median(times), 4), "min_s": round(min(times), 4),
            "test_nll": round(float(nll), 3),
        }))


if __name__ == "__main__":
    main()
