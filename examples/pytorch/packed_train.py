"""A packed training run on the CPU: two logs of the same steps, written-out attention and
the fused kernel, for seqpoint's packed keys (docs/packed.md).

    python3 examples/pytorch/packed_train.py --out packed
    seqpoint report packed/written.jsonl
    seqpoint select packed/written.jsonl --key fit --compare packed/fused.jsonl

Documents of log-normal lengths (median 300 bytes, log-sd 1, cut at the budget) are cut in
order from real text (the Python standard library's own source files, read as bytes, or the
files given with --text) and packed greedily, in order, into one row of a 2,048-token budget
per step: a document that does not fit starts the next step's row, so the tokens of a step
vary with how full its row is, and its padded length is the budget every step.

A small byte-level transformer (2 layers, width 128, 4 heads, causal) trains on the rows with
attention restricted to each document: the linear layers run on the whole packed row, the
attention once per document (the cost of `cu_seqlens` kernels: a step's attention work
follows the sum of its documents' squared lengths). Two models with the same initial
weights train on the same rows: one writes attention out (scores, mask, softmax, product),
the other calls the fused `scaled_dot_product_attention`. Their steps alternate (which goes
first alternates too), so the load of the machine drifts alike on both, and each is timed
into its own log through `seqpoint_log.TimedLog` with `doc_lens` (the row's document
lengths) and `seq_len` (the budget).
"""

import argparse
import gzip
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))
import seqpoint_log  # noqa: E402

BUDGET = 2048
MEDIAN_DOC = 300
LOG_SD = 1.0
WIDTH, LAYERS, HEADS = 128, 2, 4
WARMUP = 5  # steps run but not logged: the first steps allocate and are slow


def stdlib_sources():
    """The standard library's .py files, in a fixed order: real text present wherever Python is."""
    root = os.path.dirname(os.__file__)
    return sorted(os.path.join(root, name) for name in os.listdir(root) if name.endswith(".py"))


def corpus(paths):
    """The bytes of the given files, concatenated, each file's bytes in order."""
    data = bytearray()
    for path in paths:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as f:
            data.extend(f.read())
    return bytes(data)


def packed_rows(text, steps, seed):
    """`steps` rows of at most BUDGET bytes: documents of log-normal lengths cut in order from
    `text` (wrapping around), packed greedily in order. Returns (row bytes, document lengths)."""
    rng = random.Random(seed)
    pos = 0
    rows, row, lens = [], bytearray(), []
    pending = None
    while len(rows) < steps:
        if pending is None:
            n = min(BUDGET, max(1, int(rng.lognormvariate(math.log(MEDIAN_DOC), LOG_SD))))
            if pos + n > len(text):
                pos = 0
            pending = text[pos:pos + n]
            pos += n
        if len(row) + len(pending) > BUDGET:
            rows.append((bytes(row), lens))
            row, lens = bytearray(), []
            continue
        row.extend(pending)
        lens.append(len(pending))
        pending = None
    return rows


def build(torch, fused):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
            self.qkv, self.out = nn.Linear(WIDTH, 3 * WIDTH), nn.Linear(WIDTH, WIDTH)
            self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(),
                                     nn.Linear(4 * WIDTH, WIDTH))

        def attend(self, q, k, v):
            # One document: (heads, n, dim) each, causal.
            if fused:
                return F.scaled_dot_product_attention(q, k, v, is_causal=True)
            n = q.shape[1]
            scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
            mask = torch.ones(n, n, dtype=torch.bool).triu(1)
            return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v

        def forward(self, x, doc_lens):
            t = x.shape[0]
            qkv = self.qkv(self.norm1(x)).view(t, 3, HEADS, WIDTH // HEADS).permute(1, 2, 0, 3)
            # Attention within each document only: the packed row split at its boundaries.
            parts = [self.attend(q, k, v) for q, k, v in zip(qkv[0].split(doc_lens, dim=1),
                                                           qkv[1].split(doc_lens, dim=1),
                                                           qkv[2].split(doc_lens, dim=1))]
            a = torch.cat(parts, dim=1).permute(1, 0, 2).reshape(t, WIDTH)
            x = x + self.out(a)
            return x + self.mlp(self.norm2(x))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(256, WIDTH)
            self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
            self.head = nn.Linear(WIDTH, 256)

        def forward(self, tokens, doc_lens):
            x = self.embed(tokens)
            for block in self.blocks:
                x = block(x, doc_lens)
            return self.head(x)

    return Model()


def train_step(torch, model, optimiser, tokens, targets, doc_lens):
    optimiser.zero_grad()
    logits = model(tokens, doc_lens)
    loss = torch.nn.functional.cross_entropy(logits, targets)
    loss.backward()
    optimiser.step()
    return loss.item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="packed", help="folder for written.jsonl and fused.jsonl")
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--text", nargs="*", help="text files (default: the standard library's)")
    parser.add_argument("--force", action="store_true", help="overwrite existing logs")
    args = parser.parse_args()

    import torch

    torch.manual_seed(args.seed)
    # One thread: on a small shared CPU, contending threads make step times noisy.
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    text = corpus(args.text or stdlib_sources())
    rows = packed_rows(text, args.steps + WARMUP, args.seed)

    configs = []
    for name, fused in (("written", False), ("fused", True)):
        torch.manual_seed(args.seed)  # the same initial weights in both
        model = build(torch, fused)
        optimiser = torch.optim.AdamW(model.parameters(), lr=3e-4)
        log = seqpoint_log.TimedLog(os.path.join(args.out, f"{name}.jsonl"), synchronize=None,
                                    energy=None, overwrite=args.force)
        configs.append((name, model, optimiser, log))

    losses = {name: 0.0 for name, *_ in configs}
    for step, (row, lens) in enumerate(rows):
        data = torch.tensor(list(row), dtype=torch.long)
        # Next-byte prediction within the row (a document's last byte predicts the next
        # document's first, a small leak a real loader masks; it changes no cost).
        tokens, targets = data, torch.roll(data, -1)
        order = configs if step % 2 == 0 else configs[::-1]
        for name, model, optimiser, log in order:
            if step < WARMUP:
                train_step(torch, model, optimiser, tokens, targets, lens)
                continue
            with log.step(seq_len=BUDGET, doc_lens=lens):
                losses[name] = train_step(torch, model, optimiser, tokens, targets, lens)
    for _, _, _, log in configs:
        log.close()
    print(f"wrote {args.out}/written.jsonl and {args.out}/fused.jsonl ({args.steps} steps, "
          f"PyTorch {torch.__version__} on CPU; last loss "
          + ", ".join(f"{k} {v:.3f}" for k, v in losses.items()) + ")")


if __name__ == "__main__":
    try:
        main()
    except seqpoint_log.LogExistsError as e:
        sys.exit(f"error: {e.path} exists; rerun with --force to replace it")
