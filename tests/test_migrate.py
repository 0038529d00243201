"""The run-folder layout of issue 44 (lab.measure.records): a folder of the layout before it, migrated
(lab.studies.migrate), keeps every sample, every stop record and every note; the summary computed
from the new records is summary.csv's; a folder whose copies disagree is refused, unchanged. The
fixture (tests/fixtures/legacy/, made by make.py beside it) is the H100 run 20261126T123735Z-1a31dde
as recorded, cut to two shapes."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from lab.measure import records
from lab.studies import derived, factorial, migrate, replicates

LEGACY = Path(__file__).resolve().parent / "fixtures" / "legacy" / "20261126T123735Z-1a31dde"


@pytest.fixture
def legacy(tmp_path):
    shutil.copytree(LEGACY, tmp_path / LEGACY.name)
    return tmp_path / LEGACY.name


def _concat(folder: Path, plan: str) -> pd.DataFrame:
    """The old layout's second copy of a plan's samples: its replicates' files, in replicate order."""
    files = sorted((folder / "replicates" / plan).glob("r*.parquet"), key=lambda f: int(f.stem[1:]))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def _rows(df: pd.DataFrame) -> list:
    """Every row as a tuple, a missing value as None (NaN is not equal to itself)."""
    df = df.reindex(columns=records.SAMPLE_COLUMNS).astype(object)
    return [tuple(r) for r in df.where(df.notna(), None).itertuples(index=False)]


def test_migration_keeps_every_sample_stop_record_and_note(legacy):
    old_samples, old_timing = pd.read_parquet(legacy / "samples.parquet"), _concat(legacy, "timing")
    old_factorial = _concat(legacy, "factorial")
    old_summary = records.with_shape_columns(pd.read_csv(legacy / "summary.csv"))
    old_children = {i: json.loads((legacy / "replicates" / "timing" / f"r{i}.json").read_text()) for i in range(3)}
    assert records.RunRecord.open(str(legacy)).legacy
    with pytest.raises(records.LegacyLayout, match="python -m lab.studies.migrate"):
        derived.summary(records.RunRecord.open(str(legacy)))

    migrate.migrate(legacy, progress=lambda s: None)
    rec = records.RunRecord.open(str(legacy))
    assert not rec.legacy and not (legacy / "replicates").exists()
    assert not any((legacy / name).exists() for name in records.LEGACY_FILES)
    # every sample, once, value for value and in order: the timing's in samples.parquet (as both old copies
    # held them), the factorial's in factorial.parquet (throttled ones too, which the old one left out)
    new = pd.read_parquet(legacy / "samples.parquet")
    assert len(new) == len(old_samples) == len(old_timing) > 50_000
    assert _rows(new) == _rows(old_samples) == _rows(old_timing)
    assert _rows(pd.read_parquet(legacy / "factorial.parquet")) == _rows(old_factorial)
    # each replicate's stop record of every row, and its notes and seeds
    stops = rec.read_stops()
    for i, child in old_children.items():
        mine = stops[(stops["plan"] == "timing") & (stops["replicate"] == i)]
        assert len(mine) == len(child["rows"]) > 0
        assert sorted(mine["stopped_by"]) == sorted(r["stopped_by"] for r in child["rows"])
    log = rec.read_json("replicates.json")["timing"]
    assert [r["notes"] for r in log["runs"]] == [old_children[i]["notes"] for i in range(3)]
    assert [r["job_seeds"] for r in log["runs"]] == [old_children[i]["job_seeds"] for i in range(3)]
    # the summary computed from the new records is the one the run wrote
    keys = ["impl", *records.SHAPE_COLUMNS, "mode"]
    a = old_summary.set_index(keys).sort_index()
    b = derived.summary(rec).set_index(keys).sort_index()
    assert list(a.index) == list(b.index)
    pd.testing.assert_frame_equal(a[records.SUMMARY_COLUMNS[9:]], b[records.SUMMARY_COLUMNS[9:]], check_dtype=False,
                                  rtol=1e-12)
    assert derived.shape_notes(rec) == json.loads((LEGACY / "shapes.json").read_text())
    # and the factorial's effects are computed from its samples and design
    eff = factorial.run_effects(rec)
    assert set(eff["term"]) >= set(rec.read_json("factorial.json")["factors"])
    assert migrate.migrate(legacy, progress=lambda s: None) == {"run": LEGACY.name, "migrated": False}


@pytest.mark.parametrize("damage", ["samples", "factorial", "stops"])
def test_a_folder_whose_copies_disagree_is_refused_unchanged(legacy, damage):
    if damage == "samples":  # a sample of replicate 1 that samples.parquet does not hold
        f = legacy / "replicates" / "timing" / "r1.parquet"
        df = pd.read_parquet(f)
        df.loc[5, "latency_us"] += 1.0
        df.to_parquet(f, index=False)
    elif damage == "factorial":  # the old factorial table lost an unthrottled sample
        f = legacy / "factorial.parquet"
        pd.read_parquet(f).iloc[1:].to_parquet(f, index=False)
    else:  # a stop record that says another reason than summary.csv
        f = legacy / "replicates" / "timing" / "r0.json"
        child = json.loads(f.read_text())
        for r in child["rows"]:
            r["stopped_by"] = "cap"
        f.write_text(json.dumps(child))
    before = sorted((p.relative_to(legacy).as_posix(), p.read_bytes()) for p in legacy.rglob("*") if p.is_file())
    with pytest.raises((migrate.MigrationError, RuntimeError)):
        migrate.migrate(legacy, progress=lambda s: None)
    after = sorted((p.relative_to(legacy).as_posix(), p.read_bytes()) for p in legacy.rglob("*") if p.is_file())
    assert after == before and not legacy.with_name(legacy.name + ".migrating").exists()


def test_a_run_folds_its_plan_in_only_when_the_table_holds_exactly_its_samples(legacy):
    rec = records.RunRecord.open(str(legacy))
    df = pd.read_parquet(legacy / "samples.parquet")
    df.iloc[:-1].to_parquet(legacy / "samples.parquet", index=False)
    with pytest.raises(RuntimeError, match="does not hold exactly"):
        replicates.consolidate(rec, "timing")
    assert (legacy / "replicates" / "timing" / "r0.parquet").exists() and not rec.has(records.STOPS)
