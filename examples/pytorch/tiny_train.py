"""A tiny training run that writes the two logs seqpoint reads; no GPU needed.

    python3 examples/pytorch/tiny_train.py --out tiny
    seqpoint select tiny/run.jsonl

With PyTorch installed it trains a small GRU on CPU (on a GPU if there is one); without it,
or with --no-torch, a pure-Python loop whose work grows with the padded length stands in,
so the logging can be tried anywhere. Either way it writes:

    OUT/lengths.jsonl  the dry pass: iteration, epoch, seq_len, batch_size (nothing trained)
    OUT/run.jsonl      the timed run: the same columns plus time_ms (and energy_j on a GPU
                       with NVML)

Both passes see the same batches in the same order (the shuffling is seeded the same way),
so an iteration number means the same batch in both files.
"""

import argparse
import os
import random
import sys

# The package beside this script (this checkout's), before any installed copy, which may
# be older; copied elsewhere, the script uses `pip install ./examples/pytorch`'s.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))
import seqpoint_log  # noqa: E402

FEATURES = 16
BATCH = 8


def utterance_lengths(count, seed):
    """Lengths like speech or text: most short, a long tail."""
    rng = random.Random(seed)
    return [max(4, min(240, int(rng.lognormvariate(3.6, 0.55)))) for _ in range(count)]


class ShuffledBatches:
    """The pure-Python loader: like a DataLoader with a seeded sampler, each pass over it
    (each epoch) yields a new shuffle of the sequences, as batches of unpadded lists."""

    def __init__(self, lengths, seed):
        self.lengths, self.seed, self.epoch = lengths, seed, 0

    def __iter__(self):
        order = list(range(len(self.lengths)))
        random.Random(self.seed * 1000 + self.epoch).shuffle(order)
        self.epoch += 1
        for start in range(0, len(order), BATCH):
            yield [[0.5] * self.lengths[i] for i in order[start : start + BATCH]]


def pure_python_step(batch, work=200):
    """Stand-in training step: its work grows with the padded length, as an unpacked RNN's does."""
    padded = seqpoint_log.padded_length(len(s) for s in batch)
    state = [0.0] * len(batch)
    for _ in range(padded):
        for b in range(len(batch)):
            for _ in range(work):
                state[b] = state[b] * 0.999 + 0.001


def run_pure_python(args, lengths):
    """The pure-Python stand-in for both passes."""
    train_step = pure_python_step

    # (1) Dry pass: lengths only, nothing trained.
    seqpoint_log.dry_pass(ShuffledBatches(lengths, args.seed),
                          os.path.join(args.out, "lengths.jsonl"),
                          epochs=args.epochs, overwrite=args.force)
    # (2) Timed training over the same batches in the same order.
    loader = ShuffledBatches(lengths, args.seed)
    with seqpoint_log.TimedLog(os.path.join(args.out, "run.jsonl"), synchronize=None,
                               energy=None, overwrite=args.force) as log:
        for epoch in range(args.epochs):
            for batch in loader:
                with log.step(epoch=epoch, **seqpoint_log.describe_batch(batch)):
                    train_step(batch)
    return "pure-Python stand-in"


def run_torch(args, lengths):
    import torch
    from torch import nn
    from torch.utils.data import DataLoader

    torch.manual_seed(args.seed)
    # One thread: on a small shared CPU, several threads contending make step times noisy.
    torch.set_num_threads(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = [torch.randn(n, FEATURES) for n in lengths]

    def collate(items):
        # Pad to the longest sequence of the batch: the padded length is the batch's SL.
        return nn.utils.rnn.pad_sequence(items, batch_first=True)

    generator = torch.Generator()

    def loader():
        # Seeded afresh: the dry pass and the training see the same batches in the same
        # order; each epoch (each pass over the loader) draws the next shuffle.
        generator.manual_seed(args.seed)
        return DataLoader(data, batch_size=BATCH, shuffle=True, collate_fn=collate,
                          generator=generator)

    # (1) Dry pass: no model, no training.
    seqpoint_log.dry_pass(loader(), os.path.join(args.out, "lengths.jsonl"),
                          epochs=args.epochs, overwrite=args.force)

    # (2) Timed training.
    model = nn.GRU(FEATURES, 32, batch_first=True).to(device)
    head = nn.Linear(32, FEATURES).to(device)
    optimiser = torch.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=1e-3)
    train_loader = loader()
    with seqpoint_log.TimedLog(os.path.join(args.out, "run.jsonl"), overwrite=args.force) as log:
        for epoch in range(args.epochs):
            for x in train_loader:
                with log.step(epoch=epoch, **seqpoint_log.describe_batch(x)):
                    x = x.to(device)
                    optimiser.zero_grad()
                    out, _ = model(x)
                    loss = nn.functional.mse_loss(head(out), x)
                    loss.backward()
                    optimiser.step()
    where = "GPU" if device.type == "cuda" else "CPU"
    energy = ", with energy" if log.measures_energy else ""
    return f"PyTorch {torch.__version__} GRU on {where}{energy}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="tiny", help="folder for lengths.jsonl and run.jsonl")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--utterances", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-torch", action="store_true", help="use the pure-Python loop")
    parser.add_argument("--force", action="store_true", help="overwrite existing logs")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    lengths = utterance_lengths(args.utterances, args.seed)
    try:
        if args.no_torch:
            raise ImportError
        import torch  # noqa: F401
    except ImportError:
        what = run_pure_python(args, lengths)
    else:
        what = run_torch(args, lengths)
    print(f"wrote {args.out}/lengths.jsonl and {args.out}/run.jsonl ({what})")
    print(f"next: seqpoint select {args.out}/run.jsonl")


if __name__ == "__main__":
    try:
        main()
    except seqpoint_log.LogExistsError as e:
        sys.exit(f"error: {e.path} exists; rerun with --force to replace it")
