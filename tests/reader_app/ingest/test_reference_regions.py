"""Reference regions and masks at import (issue 19), on SQLite and PostgreSQL.

Boxes are checked against the *stored* pixels and kept in canonical text; a
mask is read like its image (a PNG at the stored or source size, a NIfTI
through the strip's own orientation, slice sampling and scaling) and kept as
``encode_mask`` bytes. Every problem names the manifest line and the field,
and a refused import writes nothing.

Fixtures used below (hand-derived):
- ``tiny.dcm``: a real 16x16 CT slice, stored as 16x16.
- ``vol.nii.gz``: ``phantom(n=31, rows=48, cols=64)``, a strip of 16 slices
  48 rows x 64 columns; ``sample_indices(31)`` = round(linspace(0, 30, 16)) =
  0, 2, 4, ..., 30, sent top first (30, 28, ..., 0), so volume slice k (even) is
  strip slice 16 - k / 2.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nibabel as nib
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import settings as settings_
from hypothesis import strategies as st
from PIL import Image
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from reader_app.core.db import make_engine
from reader_app.core.settings import Settings
from reader_app.grounding.store import decode_mask
from reader_app.ingest.errors import ImportFailed, IngestError
from reader_app.ingest.importer import import_manifest, validate
from reader_app.ingest.manifest import Manifest, ManifestEntry, ManifestInvalid, load_manifest
from reader_app.ingest.reference import StoredGrid, read_reference
from reader_app.models import AnswerKey, Case
from scoring.regions import Box, parse_region
from tests.reader_app.ingest.helpers import case, phantom, write_manifest, write_nifti
from tests.reader_app.ingest.test_import import assert_nothing_written, tiny_ct

N_SLICES, ROWS, COLS = 31, 48, 64  # the strip's volume (display order: slice, row, col)


@pytest.fixture
def db(settings: Settings) -> Iterator[Engine]:
    engine = make_engine(settings.database_url, pooled=False)
    yield engine
    engine.dispose()


def _folder(tmp_path: Path) -> Path:
    study = tmp_path / "study"
    tiny_ct(study)
    write_nifti(study / "vol.nii.gz", phantom(N_SLICES, ROWS, COLS))
    return study


def _keys(engine: Engine) -> dict[str, AnswerKey]:
    with Session(engine) as s:
        return {c.source_id: k for c, k in s.exec(select(Case, AnswerKey).join(AnswerKey)).all()}


def _mask_nifti(path: Path, voxels: list[tuple[int, int, int]], affine: np.ndarray) -> Path:
    """A mask in *stored* voxel order [i, j, k], shaped like the volume (64 x 48 x 31)."""
    data = np.zeros((COLS, ROWS, N_SLICES), dtype=np.uint8)
    for i, j, k in voxels:
        data[i, j, k] = 1
    nib.save(nib.Nifti1Image(data, affine), str(path))
    return path


# The volume's own grid (helpers.write_nifti's default: 0.7 x 0.8 x 2.5 mm, first voxel at
# LPS (-20, -15, -150) mm), stored two ways:
LPS = np.array(  # i -> patient's left, j -> posterior (as vol.nii.gz): canonical flips both
    [[-0.7, 0, 0, 20.0], [0, -0.8, 0, 15.0], [0, 0, 2.5, -150.0], [0, 0, 0, 1]]
)
# i -> patient's right, j -> anterior: already canonical; voxel (0, 0) is LPS's (63, 47)
RAS = LPS @ np.array([[-1, 0, 0, COLS - 1], [0, -1, 0, ROWS - 1], [0, 0, 1, 0], [0, 0, 0, 1]])


# --- the manifest: syntax and the kind of case, before any image is read -------------------


@pytest.mark.parametrize(
    ("kind", "files", "extra", "field", "why"),
    [
        ("spot", "tiny.dcm", {"reference_region": "1,2,x,4"}, "reference_region",
         "w 'x' in '1,2,x,4' is not a number"),
        ("spot", "tiny.dcm", {"reference_region": "1,2,3"}, "reference_region",
         "must be x,y,w,h (4 numbers), got 3"),
        ("spot", "tiny.dcm", {"reference_region": "1,2,0,4"}, "reference_region",
         "w and h must be > 0"),
        ("spot", "tiny.dcm", {"reference_region": "2:1,2,3,4"}, "reference_region",
         "a spot case's boxes are x,y,w,h (no 'slice:')"),
        ("strip", "vol.nii.gz", {"reference_region": "1,2,3,4"}, "reference_region",
         "a strip case's boxes are slice:x,y,w,h"),
        ("strip", "vol.nii.gz", {"reference_region": "0:1,2,3,4"}, "reference_region",
         "slice '0' in '0:1,2,3,4' must be a whole number >= 1"),
        ("spot", "tiny.dcm", {"reference_mask": "m.nii.gz"}, "reference_mask",
         "a spot case's mask is a .png file"),
        ("strip", "vol.nii.gz", {"reference_mask": "m.png"}, "reference_mask",
         "a strip case's mask is a .nii or .nii.gz file"),
        ("spot", "tiny.dcm", {"reference_mask": "../m.png"}, "reference_mask",
         "path escapes the manifest's folder"),
        ("spot", "tiny.dcm", {"reference_mask": "gone.png"}, "reference_mask",
         "file not found"),
        ("spot", "tiny.dcm", {"reference_region": "1,1,2,2", "reference_mask": "m.png"},
         "reference_mask", "give reference_region or reference_mask, not both"),
    ],
)  # fmt: skip
def test_manifest_refuses_a_bad_reference_by_line_and_field(
    tmp_path: Path, kind: str, files: str, extra: dict[str, str], field: str, why: str
) -> None:
    study = _folder(tmp_path)
    (study / "m.png").write_bytes(b"")
    (tmp_path / "m.png").write_bytes(b"")
    manifest = write_manifest(study, [case("ok", "tiny.dcm"), case("c1", files, kind, **extra)])
    with pytest.raises(ManifestInvalid) as info:
        load_manifest(manifest)
    (message,) = info.value.errors
    assert message.startswith(f"manifest.csv line 3, field '{field}'")
    assert why in message


def test_manifest_reads_boxes_and_a_mask_path(tmp_path: Path) -> None:
    study = _folder(tmp_path)
    (study / "masks").mkdir()
    (study / "masks" / "m.png").write_bytes(b"")
    manifest = write_manifest(
        study,
        [
            case("a", "tiny.dcm", reference_region=" 1.50, 2 ,3.0,4 ; 0,0,1,1"),
            case("b", "vol.nii.gz", "strip", reference_region="16:0,0,64,48"),
            case("c", "tiny.dcm", reference_mask="masks/m.png"),
            case("d", "tiny.dcm"),
        ],
    )
    a, b, c, d = load_manifest(manifest).entries
    assert a.reference_boxes == (Box(1.5, 2, 3, 4), Box(0, 0, 1, 1))
    assert b.reference_boxes == (Box(0, 0, 64, 48, slice=16),)
    assert c.reference_mask == (study / "masks" / "m.png").resolve() and not c.reference_boxes
    assert (d.reference_boxes, d.reference_mask) == ((), None)


def test_a_yaml_manifest_may_list_the_boxes(tmp_path: Path) -> None:
    study = _folder(tmp_path)
    (study / "manifest.yaml").write_text(
        "- {case_id: s, kind: strip, files: vol.nii.gz, diagnosis: dx,\n"
        "   reference_region: ['2:1,1,4,4', '3:0,0,64,48']}\n"
        "- {case_id: t, kind: spot, files: tiny.dcm, diagnosis: dx, reference_region: '1,1,2,2'}\n"
    )
    s, t = load_manifest(study / "manifest.yaml").entries
    assert s.reference_boxes == (Box(1, 1, 4, 4, slice=2), Box(0, 0, 64, 48, slice=3))
    assert t.reference_boxes == (Box(1, 1, 2, 2),)


# --- the import: checked against the stored pixels, stored canonically ---------------------


def test_boxes_are_stored_canonically_and_masks_as_stored(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    study = _folder(tmp_path)
    spot_mask = np.zeros((16, 16), dtype=np.uint8)
    spot_mask[3:5, 7] = 200  # any non-zero value is inside
    Image.fromarray(spot_mask).save(study / "spot_mask.png")
    # RAS storage: canonical as it is; display row = 47 - j, col = 63 - i (nifti_reader)
    _mask_nifti(study / "strip_mask.nii.gz", [(10, 5, 10)], RAS)
    manifest = write_manifest(
        study,
        [
            case("spot-box", "tiny.dcm", reference_region=" 1.50, 2 ,3.0,4 ;0,0,16,16"),
            case("strip-box", "vol.nii.gz", "strip", reference_region="16:0,0,64,48;2:1,1,4,4"),
            case("spot-mask", "tiny.dcm", reference_mask="spot_mask.png"),
            case("strip-mask", "vol.nii.gz", "strip", reference_mask="strip_mask.nii.gz"),
            case("none", "tiny.dcm"),
        ],
    )
    import_manifest(manifest, settings=settings)
    keys = _keys(db)
    assert keys["spot-box"].reference_region == "1.5,2,3,4;0,0,16,16"  # the whole image fits
    assert keys["strip-box"].reference_region == "16:0,0,64,48;2:1,1,4,4"
    assert keys["spot-box"].reference_mask is None
    spot = keys["spot-mask"]
    assert spot.reference_region is None and spot.reference_mask is not None
    assert np.argwhere(decode_mask(spot.reference_mask)).tolist() == [[3, 7], [4, 7]]
    strip = keys["strip-mask"].reference_mask
    assert strip is not None
    stored = decode_mask(strip)
    assert stored.shape == (16, ROWS, COLS)
    # voxel (i=10, j=5, k=10): volume slice 10 = strip slice 11 (index 10), row 47-5, col 63-10
    assert np.argwhere(stored).tolist() == [[10, 42, 53]]
    assert (keys["none"].reference_region, keys["none"].reference_mask) == (None, None)


def test_a_nifti_mask_follows_the_volume_orientation_to_the_stored_slice(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    """LPS storage (both in-plane axes flipped): canonical RAS flips i and j back, so a
    stored voxel (i, j) lands at display row j, column i; k = 30 (the top) is strip slice 1,
    k = 0 strip slice 16."""
    study = _folder(tmp_path)
    _mask_nifti(study / "lps.nii", [(3, 40, 30), (0, 0, 0)], LPS)
    manifest = write_manifest(study, [case("s", "vol.nii.gz", "strip", reference_mask="lps.nii")])
    import_manifest(manifest, settings=settings)
    mask = _keys(db)["s"].reference_mask
    assert mask is not None
    assert np.argwhere(decode_mask(mask)).tolist() == [[0, 40, 3], [15, 0, 0]]


def test_a_source_sized_png_mask_is_scaled_like_its_image(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    """A 2920x100 picture is stored at 1460x50 (render.MAX_SIDE). Nearest-neighbour at an
    exact factor 2 takes source pixel 2x + 1 for stored pixel x (pixel centres), so source
    rows 21 and 23, columns 1001 and 1003 become stored rows 10-11, columns 500-501."""
    study = _folder(tmp_path)
    Image.fromarray(np.full((100, 2920), 90, dtype=np.uint8)).save(study / "wide.png")
    mask = np.zeros((100, 2920), dtype=np.uint8)
    mask[21:24, 1001:1004] = 255
    mask[0, 0] = 255  # source pixel (0, 0) is nobody's nearest: it vanishes
    Image.fromarray(mask).save(study / "wide_mask.png")
    manifest = write_manifest(
        study,
        [
            case("w", "wide.png", reference_mask="wide_mask.png", reviewed_by="Dr Test"),
            case("b", "wide.png", reference_region="1400,40,60,10", reviewed_by="Dr Test"),
        ],
    )
    import_manifest(manifest, settings=settings)
    keys = _keys(db)
    stored = keys["w"].reference_mask
    assert stored is not None
    assert np.argwhere(decode_mask(stored)).tolist() == [
        [10, 500], [10, 501], [11, 500], [11, 501],
    ]  # fmt: skip
    assert keys["b"].reference_region == "1400,40,60,10"  # x + w = 1460, y + h = 50: inside


def _translate(i: float, j: float, k: float) -> np.ndarray:
    """A shift of the voxel grid by (i, j, k) voxels."""
    move = np.eye(4)
    move[:3, 3] = (i, j, k)
    return move


@pytest.mark.parametrize(
    ("row", "why"),
    [
        # tiny.dcm is stored 16x16: x + w = 17
        (case("c1", "tiny.dcm", reference_region="0,0,1,1;10,10,7,1"),
         "field 'reference_region': box 10,10,7,1 lies outside the stored image (16x16 pixels"),
        (case("c1", "vol.nii.gz", "strip", reference_region="17:0,0,1,1"),
         "field 'reference_region': box on slice 17: the strip has slices 1..16"),
        (case("c1", "vol.nii.gz", "strip", reference_region="3:60,0,5,1"),
         "box 60,0,5,1 lies outside the stored slice 3 image (64x48 pixels"),
        (case("c1", "tiny.dcm", reference_mask="m17.png"),
         "field 'reference_mask', m17.png: the mask is 17x16 pixels; the stored image is 16x16"),
        (case("c1", "tiny.dcm", reference_mask="empty.png"),
         "field 'reference_mask', empty.png: the mask is empty"),
        (case("c1", "tiny.dcm", reference_mask="fake.png"),
         "field 'reference_mask', fake.png: not a PNG file"),
        (case("c1", "vol.nii.gz", "strip", reference_mask="short.nii.gz"),
         "short.nii.gz: the mask has 30 slices, the case's volume 31"),
        (case("c1", "vol.nii.gz", "strip", reference_mask="shifted.nii.gz"),
         "shifted.nii.gz: the mask is not on the volume's voxel grid: a voxel lies 2.50 mm "
         "from the volume's same voxel (first voxel at -24.10, -22.60, -147.50 mm, the "
         "volume's at -24.10, -22.60, -150.00 mm"),
        (case("c1", "vol.nii.gz", "strip", reference_mask="coarse.nii.gz"),
         "coarse.nii.gz: the mask is not on the volume's voxel grid: a voxel lies 15.00 mm "),
        (case("c1", "vol.nii.gz", "strip", reference_mask="bare.nii.gz"),
         "bare.nii.gz: the mask has no geometry (qform and sform codes 0), so its voxels "
         "cannot be matched to the volume's"),
        (case("c1", "vol.nii.gz", "strip", reference_mask="odd.nii.gz"),
         "odd.nii.gz: the mask is empty on the strip's slices (no non-zero voxel on the "
         "sampled volume slices 0, 2, 4"),
    ],
)  # fmt: skip
def test_a_bad_reference_refuses_the_import_by_case_line_and_field(
    settings: Settings, db: Engine, tmp_path: Path, row: dict[str, str], why: str
) -> None:
    study = _folder(tmp_path)
    Image.fromarray(np.ones((16, 17), dtype=np.uint8)).save(study / "m17.png")
    Image.fromarray(np.zeros((16, 16), dtype=np.uint8)).save(study / "empty.png")
    (study / "fake.png").write_bytes(b"GIF89a not a png")
    nib.save(nib.Nifti1Image(np.ones((COLS, ROWS, 30), np.uint8), RAS), str(study / "short.nii.gz"))
    _mask_nifti(study / "odd.nii.gz", [(5, 5, 11)], RAS)  # slice 11 is not sampled
    # one slice up (2.5 mm), and a 3 mm slice spacing: 30 x 0.5 mm off at the top slice
    _mask_nifti(study / "shifted.nii.gz", [(5, 5, 10)], RAS @ _translate(0, 0, 1))
    _mask_nifti(study / "coarse.nii.gz", [(5, 5, 10)], RAS @ np.diag([1, 1, 1.2, 1]))
    bare = nib.Nifti1Image(np.asarray(nib.load(str(study / "odd.nii.gz")).dataobj), None)
    bare.header.set_qform(None, code=0)
    bare.header.set_sform(None, code=0)
    nib.save(bare, str(study / "bare.nii.gz"))
    manifest = write_manifest(study, [case("fine", "tiny.dcm", reference_region="0,0,1,1"), row])
    with pytest.raises(ImportFailed) as info:
        import_manifest(manifest, settings=settings)
    (message,) = info.value.errors
    assert message.startswith("case c1: manifest.csv line 3, field 'reference_")
    assert why in message
    assert_nothing_written(db, settings)


def test_validate_splits_a_reference_problem_into_case_line_and_field(
    settings: Settings, db: Engine, tmp_path: Path
) -> None:
    """The one-pass check the browser flow uses: the place, not only the text."""
    study = _folder(tmp_path)
    Image.fromarray(np.zeros((16, 16), dtype=np.uint8)).save(study / "empty.png")
    manifest = write_manifest(
        study,
        [
            case("c1", "tiny.dcm", reference_region="10,10,7,1"),
            case("c2", "tiny.dcm", reference_mask="empty.png"),
        ],
    )
    checked = validate(manifest, settings=settings, slug="s")
    parts = [(p.case_id, p.file, p.line, p.field) for p in checked.problems]
    assert parts == [
        ("c1", "manifest.csv", 2, "reference_region"),
        ("c2", "manifest.csv", 3, "reference_mask"),
    ]
    assert checked.problems[1].message.startswith("empty.png: the mask is empty")
    assert_nothing_written(db, settings)


MANIFEST = Manifest(path=Path("m.csv"), root=Path("."), entries=())  # boxes read no file


@settings_(max_examples=200, deadline=None)
@given(
    width=st.integers(1, 2000),
    height=st.integers(1, 2000),
    box=st.tuples(*[st.floats(0, 2100, allow_nan=False).map(lambda v: round(v, 2))] * 4),
)
def test_a_box_is_accepted_exactly_when_it_lies_in_the_stored_image(
    width: int, height: int, box: tuple[float, float, float, float]
) -> None:
    """x + w <= width and y + h <= height (the half-open span ends at the last pixel)."""
    x, y, w, h = box
    assume(w > 0 and h > 0)
    entry = ManifestEntry(
        where="m.csv line 2", case_id="c", kind="spot", files=(), diagnosis="dx",
        reference_boxes=(Box(x, y, w, h),),
    )  # fmt: skip
    grid = StoredGrid(width, height, (height, width))
    inside = x + w <= width and y + h <= height
    try:
        reference = read_reference(
            entry, MANIFEST, grid, max_pixels=10**8, max_voxels=10**8, max_inflate_bytes=10**8
        )
    except IngestError as exc:
        assert not inside, exc
        assert "lies outside the stored image" in str(exc)
    else:
        assert inside
        assert reference.region is not None and parse_region(reference.region) == (Box(x, y, w, h),)
