"""torchrun and DistributedSampler, on real torch: the dry pass shuffles each epoch as the
training does, and a 2-rank job (gloo, CPU) writes one log, one row per step, from rank 0."""

import csv
import json
import os
import subprocess
import sys

import seqpoint_log
from conftest import import_torch, without_torch_env

HERE = os.path.dirname(os.path.abspath(__file__))


def test_the_dry_pass_sets_the_samplers_epoch_as_training_does(tmp_path):
    torch = import_torch()
    from torch.utils.data import DataLoader, DistributedSampler

    data = [[0] * n for n in range(1, 41)]
    # A sampler for rank 0 of 2, no process group needed.
    sampler = DistributedSampler(data, num_replicas=2, rank=0, shuffle=True, seed=3)
    loader = DataLoader(data, batch_size=4, sampler=sampler, collate_fn=list)
    seqpoint_log.dry_pass(loader, tmp_path / "lengths.jsonl", epochs=3)
    dry = [json.loads(line)["seq_len"] for line in open(tmp_path / "lengths.jsonl")]
    real = []
    for epoch in range(3):
        sampler.set_epoch(epoch)  # what every DistributedSampler training loop does
        real += [max(len(s) for s in batch) for batch in loader]
    assert dry == real
    # Not vacuous: the epochs' shuffles differ, so skipping set_epoch would have mismatched.
    assert real[:5] != real[5:10]
    assert torch is not None


def test_a_two_rank_torchrun_job_writes_one_merged_log(tmp_path):
    import_torch()
    out = tmp_path
    run = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes", "1",
         "--nproc_per_node", "2", os.path.join(HERE, "two_ranks.py"), str(out)],
        capture_output=True, text=True, env=without_torch_env(), timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    ranks = [json.loads((out / f"rank{r}.json").read_text()) for r in range(2)]
    rows = [json.loads(line) for line in open(out / "run.jsonl")]
    dry = [json.loads(line) for line in open(out / "lengths.jsonl")]
    steps = len(ranks[0]["seq_len"])
    assert steps == 16 and len(ranks[1]["seq_len"]) == steps  # 64 sequences, 2 ranks, 4 each
    assert [r["iteration"] for r in rows] == list(range(steps))
    for i, row in enumerate(rows):
        mine = [ranks[0]["seq_len"][i], ranks[1]["seq_len"][i]]
        assert (row["rank0_seq_len"], row["rank1_seq_len"]) == tuple(mine)
        assert row["seq_len"] == max(mine)  # the longest rank's padded length
        assert row["batch_size"] == 8  # the job's step: both ranks' sequences
        assert row["time_ms"] >= 20.0  # the slowest rank's: rank 1 sleeps 20 ms a step
    differ = sum(row["rank0_seq_len"] != row["rank1_seq_len"] for row in rows)
    assert differ > 0
    # The dry pass (set_epoch per epoch) saw the training's batches on both ranks.
    assert [(r["seq_len"], r["rank0_seq_len"], r["rank1_seq_len"]) for r in dry] == [
        (r["seq_len"], r["rank0_seq_len"], r["rank1_seq_len"]) for r in rows]
    # Profiling: rank 0 writes the rows (slowest rank's time), every rank its own traces.
    with open(out / "profiles" / "measured.csv", newline="") as f:
        measured = list(csv.DictReader(f))
    assert [int(r["iteration"]) for r in measured] == [3, 10]
    assert all(float(r["time_ms"]) >= 20.0 for r in measured)
    for rank in range(2):
        names = [f"seqpoint-0-iter3-rank{rank}.pt.trace.json",
                 f"seqpoint-1-iter10-rank{rank}.pt.trace.json"]
        assert ranks[rank]["traces"] == names
        for name in names:
            info = json.loads((out / "profiles" / name).read_text())["distributedInfo"]
            assert (info["rank"], info["world_size"]) == (rank, 2)
    print(f"2-rank job: {steps} steps, ranks' padded lengths differ on {differ}; "
          f"first rows: {rows[:2]}")
