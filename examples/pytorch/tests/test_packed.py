"""Packed batches: ``log.step(doc_lens=...)`` writes the lists seqpoint derives its keys from."""

import json

import pytest

import seqpoint_log


def test_timed_steps_write_doc_lens_as_lists(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "run.jsonl"
    cu = torch.tensor([0, 512, 1536, 2048, 2048], dtype=torch.int32)  # a padded last offset
    with seqpoint_log.TimedLog(str(path), energy=None) as log:
        with log.step(seq_len=2048, doc_lens=seqpoint_log.lengths_from_cu_seqlens(cu)):
            pass
        with log.step(seq_len=2048, doc_lens=[[100, 200], torch.tensor([300])]):
            pass
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows[0]["doc_lens"] == [512, 1024, 512]
    assert rows[1]["doc_lens"] == [[100, 200], [300]]


def test_bad_lengths_are_refused():
    with pytest.raises(ValueError, match="at least 1"):
        seqpoint_log.doc_lens_value([3, 0])
    with pytest.raises(ValueError, match="at least one"):
        seqpoint_log.doc_lens_value([[3], []])
    with pytest.raises(ValueError, match="must not decrease"):
        seqpoint_log.lengths_from_cu_seqlens([0, 5, 3])


def test_an_accumulated_packed_step_keeps_each_micro_batchs_documents(tmp_path):
    # Issue 23's per-micro-batch form through the accumulation API: one list per
    # micro-batch (its packed rows' documents together), and no padded `tokens`, which
    # seqpoint would read instead of the tokens it derives from the lengths.
    path = tmp_path / "run.jsonl"
    with seqpoint_log.TimedLog(str(path), synchronize=None, energy=None) as log:
        with log.step(epoch=0) as step:
            step.micro_batch(seq_len=2048, batch_size=2, doc_lens=[[512, 1536], [2048]])
            step.micro_batch(seq_len=2048, batch_size=1, doc_lens=[100, 300])
    (row,) = [json.loads(line) for line in path.read_text().splitlines()]
    assert row["doc_lens"] == [[512, 1536, 2048], [100, 300]]
    assert (row["seq_len"], row["batch_size"], row["micro_batches"]) == (2048, 3, 2)
    assert "tokens" not in row
    with pytest.raises(ValueError, match="at least 1"):
        seqpoint_log.merge_micro_batches([{"seq_len": 4, "doc_lens": [4, 0]}])


def test_ranks_documents_make_the_jobs_step():
    # Under torchrun the job's step holds every rank's documents (as it sums batch_size),
    # not the lexicographically larger list.
    merged = seqpoint_log.merge_rank_rows([
        {"seq_len": 8, "batch_size": 2, "doc_lens": [[3, 5], [8]]},
        {"seq_len": 6, "batch_size": 1, "doc_lens": [6]},
    ])
    assert merged["doc_lens"] == [[3, 5], [8], [6]]
    assert (merged["seq_len"], merged["batch_size"]) == (8, 3)
    with pytest.raises(ValueError, match="rank 1: doc_lens"):
        seqpoint_log.merge_rank_rows([{"doc_lens": [3]}, {"doc_lens": [0]}])


def _packed_train():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parent.parent / "packed_train.py"
    spec = importlib.util.spec_from_file_location("packed_train", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_packed_rows_keep_documents_whole_within_the_budget():
    packed_train = _packed_train()
    text = bytes(range(256)) * 1000  # more than 50 rows take: no wrapping round
    rows = packed_train.packed_rows(text, 50, seed=3)
    assert len(rows) == 50
    for (row, lens), (_, following) in zip(rows, rows[1:]):
        assert len(row) == sum(lens) <= packed_train.BUDGET and all(n >= 1 for n in lens)
        # Greedy, in order: the next row's first document did not fit in this one.
        assert sum(lens) + following[0] > packed_train.BUDGET
    # The documents are the text cut in order: the rows joined are its start.
    joined = b"".join(row for row, _ in rows)
    assert joined == text[:len(joined)]


def test_the_packed_run_logs_both_configurations_with_doc_lens(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    packed_train = _packed_train()
    monkeypatch.setattr("sys.argv", ["packed_train.py", "--out", str(tmp_path), "--steps", "2"])
    packed_train.main()
    logs = {}
    for name in ("written", "fused"):
        logs[name] = [json.loads(line) for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in logs["written"]] == [0, 1]
    # The same rows in both, each row's documents within the budget, each step timed.
    for a, b in zip(logs["written"], logs["fused"]):
        assert a["doc_lens"] == b["doc_lens"] and sum(a["doc_lens"]) <= a["seq_len"] == 2048
        assert a["time_ms"] > 0 and b["time_ms"] > 0
