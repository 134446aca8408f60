"""From a training script to whole-run figures, on a tiny language model; no GPU needed.

    python3 examples/pytorch/tiny_profile.py lengths --out tiny                     # 1. dry pass
    seqpoint select tiny/lengths.jsonl --cost linear --warmup 5 --bins 8 --samples 6 \\
        -o tiny/seqpoints.json                                                      # 2. choose
    python3 examples/pytorch/tiny_profile.py profile tiny/seqpoints.json --out tiny # 3. measure
    python3 examples/pytorch/tiny_profile.py replay tiny/seqpoints.json --out tiny  # 3'. or replay
    seqpoint project tiny/seqpoints.json tiny/profiles/measured.csv                 # 4. project

Step 1 walks the data once and logs each iteration's padded length (nothing is trained).
Step 3 trains over the same batches in the same order and measures only the iterations
the SeqPoints file lists, through ``seqpoint_log.profile_seqpoints``: one Chrome trace per
listed iteration (``tiny/profiles/seqpoint-<id>-iter<n>.pt.trace.json``) and ``measured.csv``. Once
the last listed iteration has run it stops, unless ``--timed-log`` asks for every iteration
to be timed as well (``TimedLog``), to check the projection against the whole run. One
untimed step runs first, so one-time start-up costs stay out of the measured run.

With PyTorch it trains an embedding, one transformer layer and a softmax over random tokens
on one CPU thread (on a GPU if there is one); without it, or with --no-torch, the pure-Python
stand-in of tiny_train.py runs and the listed iterations are timed without torch.profiler.
"""

import argparse
import os
import sys
import time

# The package beside this script (this checkout's), before any installed copy, which may
# be older; copied elsewhere, the script uses `pip install ./examples/pytorch`'s.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))
import seqpoint_log  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tiny_train import ShuffledBatches, pure_python_step, utterance_lengths  # noqa: E402

VOCAB = 64
MODEL = 256
BATCH = 8
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def torch_available(args):
    if args.no_torch:
        return False
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def torch_loader(args, lengths):
    """A seeded DataLoader over random token sequences, padded to each batch's longest."""
    import torch
    from torch import nn
    from torch.utils.data import DataLoader

    data_rng = torch.Generator().manual_seed(args.seed)
    data = [torch.randint(1, VOCAB, (n,), generator=data_rng) for n in lengths]

    def collate(items):
        return nn.utils.rnn.pad_sequence(items, batch_first=True, padding_value=0)

    generator = torch.Generator()

    def make():
        # Seeded afresh: the dry pass and the training see the same batches in the same
        # order; each epoch (each pass over the loader) draws the next shuffle.
        generator.manual_seed(args.seed)
        return DataLoader(data, batch_size=BATCH, shuffle=True, collate_fn=collate,
                          generator=generator)

    return make


def batches(args, lengths):
    """(epoch, batch) over every epoch, torch tensors or the stand-in's lists."""
    if args.torch:
        loader = torch_loader(args, lengths)()
    else:
        loader = ShuffledBatches(lengths, args.seed)
    for epoch in range(args.epochs):
        for batch in loader:
            yield epoch, batch


def torch_train_step():
    """One optimiser step of next-token prediction, as a function of the padded batch.

    A transformer layer: its step is a few hundred operators whatever the length, each doing
    more work as the length grows, so torch.profiler's cost per recorded operator stays a
    small part of a recorded step (an LSTM on the CPU runs several operators per time step,
    and recording them all would slow the recorded steps by 10% or more).
    """
    import torch
    from torch import nn

    torch.manual_seed(0)
    # One thread: on a small shared CPU, several threads contending make step times noisy.
    torch.set_num_threads(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    embed = nn.Embedding(VOCAB, MODEL, padding_idx=0).to(device)
    layer = nn.TransformerEncoderLayer(MODEL, nhead=4, dim_feedforward=2 * MODEL,
                                       dropout=0.0, batch_first=True).to(device)
    head = nn.Linear(MODEL, VOCAB).to(device)
    parameters = [*embed.parameters(), *layer.parameters(), *head.parameters()]
    optimiser = torch.optim.Adam(parameters, lr=1e-3, foreach=True)

    def step(tokens):
        tokens = tokens.to(device)
        inputs, targets = tokens[:, :-1], tokens[:, 1:]
        causal = nn.Transformer.generate_square_subsequent_mask(inputs.shape[1], device=device)
        optimiser.zero_grad()
        hidden = layer(embed(inputs), src_mask=causal, is_causal=True)
        logits = head(hidden)
        loss = nn.functional.cross_entropy(
            logits.reshape(-1, VOCAB), targets.reshape(-1), ignore_index=0
        )
        loss.backward()
        optimiser.step()

    return step, device


def dry_pass(args, lengths):
    path = os.path.join(args.out, "lengths.jsonl")
    writer = seqpoint_log.RunLogWriter(path, overwrite=args.force)
    with writer:
        for iteration, (epoch, batch) in enumerate(batches(args, lengths)):
            writer.write(iteration, epoch=epoch, **seqpoint_log.describe_batch(batch))
    print(f"wrote {path}: {writer.rows} iterations ({'PyTorch' if args.torch else 'pure Python'})")
    print(f"next: seqpoint select {path} --cost linear --warmup 5 --bins 8 --samples 6 "
          f"-o {args.out}/seqpoints.json")


def profile(args, lengths):
    if args.torch:
        train_step, device = torch_train_step()
        what = f"PyTorch transformer layer on {device.type.upper()}"
        # One untimed step first: one-time start-up costs (first-call dispatch, allocator
        # growth, optimiser state) belong to no iteration the SeqPoints stand for.
        train_step(next(iter(torch_loader(args, lengths)())))
    else:
        # Five times tiny_train's work per step: steps of tens of milliseconds, as a model's
        # are, so that the logging around a step is a small part of it.
        def train_step(batch):
            pure_python_step(batch, work=1000)

        what = "pure-Python stand-in"
    profiles = os.path.join(args.out, "profiles")
    clock = CLOCKS[args.clock]
    timed = None
    if args.timed_log:
        timed = seqpoint_log.TimedLog(args.timed_log, energy=None, clock=clock,
                                      overwrite=args.force)
    with seqpoint_log.profile_seqpoints(args.seqpoints, profiles, warmup=args.warmup,
                                        profiler=args.torch and not args.no_traces, clock=clock,
                                        overwrite=args.force) as prof:
        for epoch, batch in batches(args, lengths):
            if timed is None and prof.done:
                break  # every listed iteration has run: nothing left to measure
            if timed is None:
                train_step(batch)
                prof.step()  # torch.profiler's habit: a bare call at the end of each step
            else:
                # The profiled step holds the timed one: both time the same work, the
                # profiled one also the timed log's own bookkeeping (a line written).
                columns = seqpoint_log.describe_batch(batch)
                with prof.step():
                    with timed.step(epoch=epoch, **columns):
                        train_step(batch)
    if timed is not None:
        timed.close()
    traces = f", {len(prof.trace_files)} Chrome traces" if prof.uses_torch_profiler else ""
    print(f"measured {len(prof.measured)} listed iterations in {prof.iteration} steps "
          f"({what}){traces}; wrote {prof.measured_path}")
    if timed is not None:
        print(f"wrote {args.timed_log}: every iteration timed")
    print(f"next: seqpoint project {args.seqpoints} {prof.measured_path}")


def replay(args, lengths):
    """Measure the listed iterations by replaying their batches (seqpoint_log.replay)."""
    if args.torch:
        train_step, device = torch_train_step()
        what = f"PyTorch transformer layer on {device.type.upper()}"
    else:
        def train_step(batch):
            pure_python_step(batch, work=1000)

        what = "pure-Python stand-in"
    started = time.perf_counter()
    times = seqpoint_log.replay(
        args.seqpoints, (batch for _, batch in batches(args, lengths)), train_step,
        os.path.join(args.out, "profiles"), warmup=args.warmup_steps, repeats=args.repeats,
        profiler=args.torch and not args.no_traces, clock=CLOCKS[args.clock],
        overwrite=args.force)
    print(f"replayed {len(times)} listed iterations ({what}) in "
          f"{time.perf_counter() - started:.1f} s wall; wrote {args.out}/profiles/measured.csv")
    print(f"next: seqpoint project {args.seqpoints} {args.out}/profiles/measured.csv")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    lengths_cmd = sub.add_parser("lengths", help="dry pass: OUT/lengths.jsonl")
    profile_cmd = sub.add_parser("profile", help="train, measuring only the listed iterations")
    profile_cmd.add_argument("seqpoints", help="the SeqPoints file from seqpoint select")
    profile_cmd.add_argument("--warmup", type=int, default=1,
                             help="profiler warm-up steps before each listed iteration")
    profile_cmd.add_argument("--timed-log", metavar="PATH",
                             help="also time every iteration into PATH (to check the projection)")
    profile_cmd.add_argument("--no-traces", action="store_true",
                             help="time the listed iterations without torch.profiler")
    profile_cmd.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                             help="wall time, or this process's CPU time (which other programs "
                                  "on a shared machine do not inflate)")
    replay_cmd = sub.add_parser("replay", help="measure the listed iterations by replaying "
                                "their batches, without training up to them")
    replay_cmd.add_argument("seqpoints", help="the SeqPoints file from seqpoint select")
    replay_cmd.add_argument("--warmup-steps", type=int, default=2,
                            help="untimed steps of each listed batch before its timed ones")
    replay_cmd.add_argument("--repeats", type=int, default=3,
                            help="timed steps of each listed batch (their mean is its time)")
    replay_cmd.add_argument("--no-traces", action="store_true",
                            help="time the listed iterations without torch.profiler")
    replay_cmd.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    for cmd in (lengths_cmd, profile_cmd, replay_cmd):
        cmd.add_argument("--out", default="tiny", help="folder for the outputs")
        cmd.add_argument("--epochs", type=int, default=4)
        cmd.add_argument("--utterances", type=int, default=600)
        cmd.add_argument("--seed", type=int, default=0)
        cmd.add_argument("--no-torch", action="store_true", help="use the pure-Python stand-in")
        cmd.add_argument("--force", action="store_true", help="overwrite earlier outputs")
    args = parser.parse_args()
    args.torch = torch_available(args)
    os.makedirs(args.out, exist_ok=True)
    lengths = utterance_lengths(args.utterances, args.seed)
    if args.command == "lengths":
        dry_pass(args, lengths)
    elif args.command == "replay":
        replay(args, lengths)
    else:
        started = time.perf_counter()
        profile(args, lengths)
        print(f"({time.perf_counter() - started:.1f} s wall)")


if __name__ == "__main__":
    try:
        main()
    except seqpoint_log.LogExistsError as e:
        sys.exit(f"error: {e.path} exists; rerun with --force to replace it")
