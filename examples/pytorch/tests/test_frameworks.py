"""The Hugging Face and Lightning callbacks, on real transformers and lightning with tiny
models built from a config (nothing downloaded), on the CPU: each logs one row per
optimizer step (micro-batches merged), and, given a SeqPoints file, profiles exactly the
listed steps."""

import csv
import json
import os

import pytest

import seqpoint_log
from conftest import require

LISTED = (1, 2, 5, 7)


def seqpoints(tmp_path):
    doc = {"schema": "seqpoint/1",
           "seqpoints": [{"id": i, "iteration": it, "weight": 1} for i, it in enumerate(LISTED)]}
    path = tmp_path / "seqpoints.json"
    path.write_text(json.dumps(doc))
    return path


def sequences(torch, count=48):
    g = torch.Generator().manual_seed(0)
    return [torch.randint(1, 60, (int(n),), generator=g)
            for n in torch.randint(4, 33, (count,), generator=g)]


def read_log(path):
    return [json.loads(line) for line in open(path)]


def check_profiles(out, steps):
    with open(out / "measured.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["iteration"]) for r in rows] == list(LISTED)
    for seqpoint, iteration in enumerate(LISTED):
        events = json.loads((out / f"seqpoint-{seqpoint}-iter{iteration}.pt.trace.json")
                            .read_text())["traceEvents"]
        labels = {e.get("name") for e in events}
        assert f"ProfilerStep#{iteration}" in labels
        assert not {f"ProfilerStep#{s}" for s in range(steps) if s != iteration} & labels


def expected_rows(padded, accumulate):
    """(seq_len, batch_size, micro_batches) per optimizer step from the batches' shapes."""
    rows = []
    for start in range(0, len(padded), accumulate):
        group = padded[start:start + accumulate]
        rows.append((max(t for t, _ in group), sum(b for _, b in group), len(group)))
    return rows


def test_hugging_face_trainer_callback_logs_and_profiles_optimizer_steps(tmp_path):
    torch = require("torch")
    transformers = require("transformers")
    from seqpoint_log.hf import SeqPointCallback

    assert issubclass(SeqPointCallback, transformers.TrainerCallback)
    torch.set_num_threads(1)
    data = [{"input_ids": s} for s in sequences(torch)]
    padded = []

    def collate(items):
        ids = torch.nn.utils.rnn.pad_sequence([i["input_ids"] for i in items],
                                              batch_first=True, padding_value=0)
        padded.append(tuple(ids.shape[::-1]))
        labels = ids.masked_fill(ids == 0, -100)
        return {"input_ids": ids, "attention_mask": (ids != 0).long(), "labels": labels}

    def train(callback, name):
        config = transformers.GPT2Config(vocab_size=60, n_positions=64, n_embd=16, n_layer=1,
                                         n_head=2)
        torch.manual_seed(0)
        args = transformers.TrainingArguments(
            output_dir=str(tmp_path / name), per_device_train_batch_size=4,
            gradient_accumulation_steps=2, num_train_epochs=2, save_strategy="no",
            logging_strategy="no", report_to=[], use_cpu=True, seed=0,
            dataloader_num_workers=0, disable_tqdm=True)
        trainer = transformers.Trainer(model=transformers.GPT2LMHeadModel(config), args=args,
                                       train_dataset=data, data_collator=collate,
                                       callbacks=[callback])
        trainer.train()
        return trainer

    trainer = train(SeqPointCallback(tmp_path / "run.jsonl"), "logged")
    rows = read_log(tmp_path / "run.jsonl")
    # 48 sequences in batches of 4 = 12 micro-batches an epoch, 2 per optimizer step.
    assert trainer.state.global_step == 12 == len(rows)
    assert [r["iteration"] for r in rows] == list(range(12))
    assert [r["epoch"] for r in rows] == [0] * 6 + [1] * 6
    assert [(r["seq_len"], r["batch_size"], r["micro_batches"]) for r in rows] == \
        expected_rows(padded, 2)
    assert all(r["time_ms"] > 0 for r in rows)

    out = tmp_path / "profiles"
    train(SeqPointCallback(seqpoints=seqpoints(tmp_path), out_dir=out), "profiled")
    check_profiles(out, 12)


def test_lightning_callback_logs_and_profiles_optimizer_steps(tmp_path):
    torch = require("torch")
    L = require("lightning")
    from seqpoint_log.lightning import SeqPointCallback

    assert issubclass(SeqPointCallback, L.pytorch.Callback)
    torch.set_num_threads(1)
    data = sequences(torch, count=40)
    padded = []

    class Tiny(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(60, 16)
            self.head = torch.nn.Linear(16, 60)

        def training_step(self, batch, batch_idx):
            logits = self.head(self.embed(batch[:, :-1]))
            return torch.nn.functional.cross_entropy(logits.reshape(-1, 60),
                                                     batch[:, 1:].reshape(-1))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    def collate(items):
        batch = torch.nn.utils.rnn.pad_sequence(items, batch_first=True)
        padded.append(tuple(batch.shape[::-1]))
        return batch

    def fit(callback, **trainer_options):
        torch.manual_seed(0)
        loader = torch.utils.data.DataLoader(data, batch_size=4, shuffle=True,
                                             collate_fn=collate,
                                             generator=torch.Generator().manual_seed(0))
        trainer = L.Trainer(max_epochs=2, accumulate_grad_batches=3, accelerator="cpu",
                            logger=False, enable_checkpointing=False,
                            enable_progress_bar=False, enable_model_summary=False,
                            callbacks=[callback], **trainer_options)
        trainer.fit(Tiny(), loader)
        return trainer

    trainer = fit(SeqPointCallback(tmp_path / "run.jsonl"))
    rows = read_log(tmp_path / "run.jsonl")
    # 10 batches an epoch, 3 per optimizer step: steps of 3, 3, 3 and 1 batches.
    assert trainer.global_step == 8 == len(rows)
    assert [r["epoch"] for r in rows] == [0] * 4 + [1] * 4
    per_epoch = [padded[:10], padded[10:20]]
    expected = [row for epoch in per_epoch for row in expected_rows(epoch, 3)]
    assert [(r["seq_len"], r["batch_size"], r["micro_batches"]) for r in rows] == expected

    out = tmp_path / "profiles"
    fit(SeqPointCallback(seqpoints=seqpoints(tmp_path), out_dir=out))
    check_profiles(out, 8)
    assert sorted(os.listdir(out)) == sorted(
        ["measured.csv"] + [f"seqpoint-{i}-iter{it}.pt.trace.json" for i, it in enumerate(LISTED)])

    # Lightning's own PyTorchProfiler beside it would record one listed step: refused.
    from lightning.pytorch.profilers import PyTorchProfiler

    with pytest.raises(RuntimeError, match="drop the Trainer's PyTorchProfiler"):
        fit(SeqPointCallback(seqpoints=seqpoints(tmp_path), out_dir=tmp_path / "again"),
            profiler=PyTorchProfiler())

    # SeqPointSchedule given to that profiler would record the first listed step only, in
    # silence: refused where the profiler is made, naming the callback instead.
    with pytest.raises(TypeError, match="use seqpoint_log.lightning.SeqPointCallback"):
        PyTorchProfiler(schedule=seqpoint_log.SeqPointSchedule(seqpoints(tmp_path)))
    # torch.profiler's own use of it is untouched.
    schedule = seqpoint_log.SeqPointSchedule(seqpoints(tmp_path))
    with torch.profiler.profile(schedule=schedule, on_trace_ready=lambda p: None) as prof:
        for _ in range(3):
            prof.step()
