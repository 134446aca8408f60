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
