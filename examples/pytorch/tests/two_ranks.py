"""A 2-rank job for the torchrun test: ``torchrun --standalone --nproc_per_node 2
two_ranks.py OUT``. Each rank trains its own shard of a DistributedSampler (gloo, CPU),
logs through seqpoint_log (dry pass, timed log, profile of listed iterations, bare
``prof.step()``), and writes what it saw itself to OUT/rank<r>.json for the test to check
against the job's log. Rank 1 sleeps 20 ms in every step: the job's step is as slow as it."""

import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler

import seqpoint_log

EPOCHS = 2
LISTED = (3, 10)


def main(out):
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(1)
    data = [torch.randint(1, 50, (int(n),), generator=g)
            for n in torch.randint(3, 40, (64,), generator=g)]
    sampler = DistributedSampler(data, shuffle=True, seed=7)
    loader = DataLoader(data, batch_size=4, sampler=sampler,
                        collate_fn=lambda b: nn.utils.rnn.pad_sequence(b, batch_first=True))
    seqpoint_log.dry_pass(loader, os.path.join(out, "lengths.jsonl"), epochs=EPOCHS)

    model = nn.Sequential(nn.Embedding(50, 16), nn.Linear(16, 50))
    optimiser = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = []

    def train(batch):
        optimiser.zero_grad()
        logits = model(batch[:, :-1])
        nn.functional.cross_entropy(logits.reshape(-1, 50), batch[:, 1:].reshape(-1)).backward()
        optimiser.step()
        if rank == 1:
            time.sleep(0.020)

    with seqpoint_log.TimedLog(os.path.join(out, "run.jsonl")) as log:
        for epoch in range(EPOCHS):
            sampler.set_epoch(epoch)
            for batch in loader:
                seen.append(batch.shape[1])
                with log.step(epoch=epoch, **seqpoint_log.describe_batch(batch)):
                    train(batch)
    doc = {"schema": "seqpoint/1",
           "seqpoints": [{"id": i, "iteration": it, "weight": 1} for i, it in enumerate(LISTED)]}
    with seqpoint_log.profile_seqpoints(doc, os.path.join(out, "profiles")) as prof:
        for epoch in range(EPOCHS):
            sampler.set_epoch(epoch)
            for batch in loader:
                train(batch)
                prof.step()
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump({"seq_len": seen, "traces": sorted(os.path.basename(t)
                                                     for t in prof.trace_files)}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
