"""Download, unpack and verify the pinned datasets into the user cache.

GitHub datasets (Who&When, BLAME) come as the repository archive of the pinned commit,
``<mirror>/<owner>/<repo>/archive/<commit>.tar.gz`` (``BLAME_BENCH_MIRROR`` replaces the base
``https://github.com``; the archive's top folder is ``<repo>-<commit>/``). Archives are not
byte-stable, so the check is by content: ``datasets_manifest.json`` beside this module holds the
sha256 of every file the loaders read (``DatasetSource.read_globs``), computed from the pinned
copies in ``../shared/datasets/`` (``manifest_of``; ``tests/blame/test_fetch.py`` keeps them in
step). AFTraj comes from the Hugging Face Hub at a revision the user names; no copy of it was
available to pin, so it is recorded as unverified.

A download is unpacked into a hidden staging folder of the cache and moved to
``<cache>/<name>`` only once it verified, so an interrupted or corrupt download leaves no half
dataset behind. The moved folder carries ``.blame-bench-source.json`` (URL, revision, time).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pooch

from blame.errors import DatasetNotFoundError
from blame.sources import DatasetSource, cache_root

MANIFEST_PATH = Path(__file__).with_name("datasets_manifest.json")
SOURCE_RECORD = ".blame-bench-source.json"
DEFAULT_MIRROR = "https://github.com"
HUB_FILES = ["aftraj_safe.parquet", "aftraj_unsafe.parquet", "splits_test.json"]


class DatasetVerificationError(DatasetNotFoundError):
    """A dataset copy differs from the pinned manifest (the pinned dataset is not available)."""


@dataclass(frozen=True)
class Check:
    """The outcome of comparing a folder with the manifest: ``status`` is the one-line verdict."""

    ok: bool
    status: str
    file: str = ""
    problem: str = ""


def files_read(source: DatasetSource, folder: Path) -> list[str]:
    """The files of ``folder`` the loader reads, as sorted POSIX paths relative to it."""
    found = {p.relative_to(folder).as_posix() for pattern in source.read_globs for p in folder.glob(pattern) if p.is_file()}
    return sorted(found)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def manifest_of(source: DatasetSource, folder: Path) -> dict[str, str]:
    """sha256 of every file ``source``'s loader reads in ``folder`` (what the manifest pins)."""
    return {name: sha256(folder / name) for name in files_read(source, folder)}


def load_manifest() -> dict[str, dict]:
    return json.loads(MANIFEST_PATH.read_text(encoding="utf-8"))


def verify(source: DatasetSource, folder: Path) -> Check:
    """Compare ``folder`` with the manifest: every pinned file present and equal, none added."""
    pinned = load_manifest().get(source.name)
    if pinned is None:
        return Check(True, "unverified: no pinned manifest for this dataset")
    expected: dict[str, str] = pinned["files"]
    actual = set(files_read(source, folder))
    problems = [(name, "missing") for name in sorted(set(expected) - actual)]
    problems += [(name, "not in the manifest") for name in sorted(actual - set(expected))]
    problems += [(name, "sha256 differs") for name in sorted(actual & set(expected)) if sha256(folder / name) != expected[name]]
    if not problems:
        return Check(True, f"verified: {len(expected)} files match the manifest of {source.revision[:12]}")
    (name, problem), more = problems[0], (f" and {len(problems) - 1} more" if len(problems) > 1 else "")
    return Check(False, f"differs from the manifest: {name} ({problem}){more}", name, problem)


def verification_error(source: DatasetSource, folder: Path, check: Check) -> DatasetVerificationError:
    """The cached copy in ``folder`` differs from the manifest: name the file and the remedy."""
    return DatasetVerificationError(
        f"{folder / check.file}: {check.problem} (checked against {MANIFEST_PATH.name}, the {source.name} "
        f"dataset at {source.github}@{source.revision[:12]}). Run `blame data fetch {source.name} --force` "
        f"to download it again, or point {source.env_var} at a clone of that commit."
    )


def read_record(folder: Path) -> dict[str, str]:
    path = folder / SOURCE_RECORD
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return {}


def cached_origin(folder: Path) -> str:
    """'downloaded from URL at TIME into FOLDER', or 'user cache: FOLDER' for a copy put there by hand."""
    record = read_record(folder)
    if record.get("url"):
        return f"downloaded from {record['url']} at {record.get('fetched_at', '?')} into {folder}"
    return f"user cache: {folder}"


def revision_of(source: DatasetSource, folder: Path, check: Check) -> str:
    """The recorded revision of a downloaded copy, else the pin when the copy verified, else unknown."""
    record = read_record(folder).get("revision")
    if record:
        return record
    return source.revision if check.ok and source.revision else "unknown"


def archive_url(source: DatasetSource) -> str:
    mirror = (os.environ.get("BLAME_BENCH_MIRROR") or DEFAULT_MIRROR).rstrip("/")
    return f"{mirror}/{source.github}/archive/{source.revision}.tar.gz"


def _install(source: DatasetSource, staged: Path, record: dict[str, str]) -> Path:
    """Move a complete, checked ``staged`` folder to ``<cache>/<name>`` (replacing an old copy)."""
    (staged / SOURCE_RECORD).write_text(json.dumps(record, indent=1), encoding="utf-8")
    target = cache_root() / source.name
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".old-{source.name}-", dir=cache_root()))
        target.rename(old / source.name)
        shutil.rmtree(old, ignore_errors=True)
    staged.rename(target)
    return target


def _staging(source: DatasetSource) -> Path:
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    for leftover in root.glob(f".partial-{source.name}-*"):  # an hour old: left by a killed run
        if time.time() - leftover.stat().st_mtime > 3600:
            shutil.rmtree(leftover, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f".partial-{source.name}-", dir=root))


def fetch_github(source: DatasetSource, progress: bool = True) -> Path:
    """Download the pinned archive of ``source``, unpack, verify and install it in the cache."""
    url = archive_url(source)
    target = cache_root() / source.name
    print(f"blame-bench: downloading the {source.name} dataset ({source.github}@{source.revision[:12]}) "
          f"from {url} into {target}", file=sys.stderr)
    staging = _staging(source)
    repo = source.github.split("/")[1]
    try:
        pooch.get_logger().setLevel("WARNING")  # not the "use this known_hash" hint: archives are not byte-stable
        archive = pooch.retrieve(
            url,
            known_hash=None,
            fname=f"{repo}-{source.revision}.tar.gz",
            path=staging,
            downloader=pooch.HTTPDownloader(progressbar=progress, timeout=60),
        )
        _check_members(archive)
        pooch.Untar(extract_dir=str(staging / "unpacked"))(archive, "download", None)
        folder = staging / "unpacked" / f"{repo}-{source.revision}" / source.subfolder
        check = verify(source, folder)
        if not check.ok:
            inside = f"{repo}-{source.revision}/{source.subfolder + '/' if source.subfolder else ''}{check.file}"
            raise DatasetVerificationError(
                f"{inside}: {check.problem} in the archive {url}, checked against {MANIFEST_PATH.name}; "
                f"nothing was kept. Point {source.env_var} at a clone of {source.github} at that commit "
                f"(used as it is, recorded as not verified)."
            )
        record = {"url": url, "revision": source.revision, "fetched_at": _now()}
        return _install(source, folder, record)
    except DatasetVerificationError:
        raise
    except Exception as error:  # network, HTTP status, truncated or malformed archive, full disk
        raise DatasetNotFoundError(
            f"Downloading the {source.name} dataset from {url} failed ({_short(error)}); "
            f"nothing was kept in {cache_root()}. Set BLAME_BENCH_MIRROR to another download base, or "
            f"{source.remedy.removeprefix(f'run `blame data fetch {source.name}`, or ')}"
        ) from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _check_members(archive: str) -> None:
    """Refuse an archive with a member outside its folder or other than a file or a folder
    (pooch unpacks without tarfile's ``data`` filter on Python < 3.12)."""
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if member.name.startswith("/") or ".." in Path(member.name).parts or not (member.isfile() or member.isdir()):
                raise ValueError(f"unsafe archive member {member.name!r}")


def fetch_hub(source: DatasetSource, revision: str, progress: bool = True) -> Path:
    """Download ``source.hub_repo`` at ``revision`` from the Hugging Face Hub into the cache."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.utils import disable_progress_bars, enable_progress_bars

    target = cache_root() / source.name
    print(f"blame-bench: downloading the {source.name} dataset ({source.hub_repo}@{revision}) "
          f"from the Hugging Face Hub into {target}", file=sys.stderr)
    staging = _staging(source)
    (enable_progress_bars if progress else disable_progress_bars)()
    try:
        snapshot_download(repo_id=source.hub_repo, repo_type="dataset", revision=revision,
                          local_dir=staging / "data", allow_patterns=HUB_FILES)
        folder = staging / "data"
        shutil.rmtree(folder / ".cache", ignore_errors=True)  # huggingface_hub's own bookkeeping
        missing = [name for name in HUB_FILES[:2] if not (folder / name).is_file()]
        if missing:
            raise FileNotFoundError(f"the revision holds no {', '.join(missing)}")
        record = {"url": f"https://huggingface.co/datasets/{source.hub_repo}", "revision": revision, "fetched_at": _now()}
        return _install(source, folder, record)
    except Exception as error:
        raise DatasetNotFoundError(
            f"Downloading the {source.name} dataset from the Hugging Face Hub ({source.hub_repo}@{revision}) "
            f"failed ({_short(error)}); nothing was kept in {cache_root()}."
        ) from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _short(error: Exception) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= 240 else text[:237] + "..."


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
