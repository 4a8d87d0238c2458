"""Download, unpack and verify the pinned datasets into the user cache.

GitHub datasets (Who&When, BLAME) come as the repository archive of the pinned commit,
``<mirror>/<owner>/<repo>/archive/<commit>.tar.gz`` (``BLAME_BENCH_MIRROR`` replaces the base
``https://github.com``; the archive's top folder is ``<repo>-<commit>/``). Archives are not
byte-stable, so the check is by content: ``datasets_manifest.json`` beside this module holds the
sha256 of every file the loaders read (``DatasetSource.read_globs``), computed from the pinned
copies in ``../shared/datasets/`` (``manifest_of``; ``tests/blame/test_fetch.py`` keeps them in
step). AFTraj comes from the Hugging Face Hub at a revision the user names; no copy of it was
available to pin, so it is recorded as unverified. The revision a copy is reported at is the
manifest's when it verified (:func:`revision_of`): the copy's ``.blame-bench-source.json`` (URL,
revision, time) is trusted for the revision of an unpinned dataset only.

Concurrency (any number of processes, e.g. ``inspect eval-set`` tasks on an empty cache): every
change to ``<cache>/<name>`` happens under an inter-process lock, ``<cache>/.<name>.lock``
(:mod:`filelock`: an OS lock, released when its holder ends, however it ends). Under the lock a
fetch (:func:`fetch_github`, :func:`fetch_hub`)

1. removes every ``.partial-<name>-*`` staging folder: only a lock holder makes one and removes
   it before letting go, so any found then was left by a process that is gone;
2. accepts a verified copy of the wanted revision already installed (say, by the process it
   waited for) unless ``force``;
3. else downloads into a new ``.partial-<name>-*`` folder of the cache, checks it, and renames it
   to ``<cache>/<name>`` (the old copy is first renamed into the staging folder, removed with it).

Readers do not take the lock; a cached copy that fails verification is checked once more under
it (:func:`verify_cached`), so a copy being replaced by a concurrent ``--force`` fetch is not
reported as damaged. ``BLAME_BENCH_OFFLINE=1`` forbids every download (:class:`OfflineError`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import filelock
import pooch
from tqdm import tqdm

from blame.errors import DatasetNotFoundError
from blame.sources import DatasetSource, cache_root, holds, offline

MANIFEST_PATH = Path(__file__).with_name("datasets_manifest.json")
SOURCE_RECORD = ".blame-bench-source.json"
DEFAULT_MIRROR = "https://github.com"
HUB_FILES = ["aftraj_safe.parquet", "aftraj_unsafe.parquet", "splits_test.json"]


class DatasetVerificationError(DatasetNotFoundError):
    """A dataset copy differs from the pinned manifest (the pinned dataset is not available)."""


class OfflineError(DatasetNotFoundError):
    """A download was asked for while ``BLAME_BENCH_OFFLINE`` forbids downloads."""


@dataclass(frozen=True)
class Check:
    """The outcome of comparing a folder with the manifest: ``status`` is the one-line verdict,
    ``problems`` every differing file (manifest path, what is wrong), ``revision`` the pinned
    revision compared with ("" for a dataset with no manifest)."""

    ok: bool
    status: str
    problems: tuple[tuple[str, str], ...] = ()
    revision: str = ""

    def listing(self, place: Callable[[str], object] = str) -> str:
        """Every problem as ``PLACE: problem``, ``place`` turning a manifest path into what to show."""
        return "; ".join(f"{place(name)}: {problem}" for name, problem in self.problems)


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
    revision = pinned["revision"]
    actual = set(files_read(source, folder))
    problems = [(name, "missing") for name in sorted(set(expected) - actual)]
    problems += [(name, "not in the manifest") for name in sorted(actual - set(expected))]
    problems += [(name, "sha256 differs") for name in sorted(actual & set(expected)) if sha256(folder / name) != expected[name]]
    if not problems:
        return Check(True, f"verified: {len(expected)} files match the manifest of {revision[:12]}", (), revision)
    check = Check(False, "", tuple(problems), revision)
    return Check(False, f"differs from the manifest: {check.listing()}", check.problems, revision)


def verification_error(source: DatasetSource, folder: Path, check: Check) -> DatasetVerificationError:
    """The cached copy in ``folder`` differs from the manifest: name every file and the remedy."""
    return DatasetVerificationError(
        f"{check.listing(lambda name: folder / name)} (checked against {MANIFEST_PATH.name}, the {source.name} "
        f"dataset at {source.github}@{source.revision[:12]}). Run `blame data fetch {source.name} --force` "
        f"to download it again, or point {source.env_var} at a clone of that commit."
    )


def verify_cached(source: DatasetSource) -> Check:
    """:func:`verify` of ``<cache>/<name>``; a failure is checked again under the dataset's lock,
    since a concurrent fetch may have been replacing the copy (a cache the user cannot write,
    hence not lock, keeps the first verdict)."""
    folder = cache_root() / source.name
    check = verify(source, folder)
    if check.ok:
        return check
    try:
        with dataset_lock(source):
            return verify(source, folder)
    except OSError:
        return check


def read_record(folder: Path) -> dict[str, str]:
    path = folder / SOURCE_RECORD
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return {}


def cached_origin(folder: Path, check: Check) -> str:
    """'downloaded from URL at TIME into FOLDER' (saying so if the record names another revision
    than the pinned one), or 'user cache: FOLDER' for a copy put there by hand."""
    record = read_record(folder)
    if not record.get("url"):
        return f"user cache: {folder}"
    origin = f"downloaded from {record['url']} at {record.get('fetched_at', '?')} into {folder}"
    if check.revision and record.get("revision") != check.revision:
        origin += f" ({SOURCE_RECORD} names revision {record.get('revision')!r}, not the manifest's: ignored)"
    return origin


def revision_of(source: DatasetSource, folder: Path, check: Check) -> str:
    """The revision ``folder`` holds: the manifest's if it verified against it, 'unknown' if it
    differs; for a dataset with no manifest, the revision its download recorded, else 'unknown'."""
    if check.revision:
        return check.revision if check.ok else "unknown"
    return read_record(folder).get("revision") or "unknown"


def archive_url(source: DatasetSource) -> str:
    mirror = (os.environ.get("BLAME_BENCH_MIRROR") or DEFAULT_MIRROR).rstrip("/")
    return f"{mirror}/{source.github}/archive/{source.revision}.tar.gz"


def dataset_lock(source: DatasetSource) -> filelock.FileLock:
    """The inter-process lock that guards ``<cache>/<name>`` and its staging folders."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    return filelock.FileLock(root / f".{source.name}.lock")


def _acquired(source: DatasetSource) -> filelock.AcquireReturnProxy:
    """:func:`dataset_lock`, acquired (released when the returned context exits); says so on the
    console when it has to wait."""
    try:
        lock = dataset_lock(source)
        try:
            return lock.acquire(timeout=0)
        except filelock.Timeout:
            print(f"blame-bench: waiting for another process that is fetching the {source.name} dataset "
                  f"(lock {lock.lock_file})", file=sys.stderr)
            return lock.acquire()
    except OSError as error:  # a cache folder the user cannot write
        raise DatasetNotFoundError(f"Cannot lock the {source.name} dataset in the user cache {cache_root()} "
                                   f"({_short(error)}); set BLAME_BENCH_CACHE to a folder you can write.") from error


def _installed(source: DatasetSource, target: Path, revision: str) -> bool:
    """Whether ``target`` holds ``source`` at ``revision``: verified against the manifest, or
    (no manifest) recorded as downloaded at that revision."""
    if not holds(source, target):
        return False
    check = verify(source, target)
    return check.ok and (bool(check.revision) or read_record(target).get("revision") == revision)


def _fetch_into_cache(
    source: DatasetSource, revision: str, what: str, where: str, url: str, hint: str, force: bool,
    download: Callable[[Path], Path],
) -> Path:
    """The locked fetch of the module docstring: ``download(staging)`` returns the checked folder
    (inside ``staging``) to install, recorded as ``url`` at ``revision``. ``what`` (repository and
    revision) and ``where`` (URL or service) name the download on the console; any failure leaves
    the cache as it was and is raised as a one-line ``DatasetNotFoundError`` (``hint`` appended)."""
    if offline():
        raise OfflineError(f"BLAME_BENCH_OFFLINE=1 forbids downloads: the {source.name} dataset ({what}) was "
                           f"not downloaded from {where}. Unset BLAME_BENCH_OFFLINE to allow it.")
    root, target = cache_root(), cache_root() / source.name
    with _acquired(source):
        for orphan in root.glob(f".partial-{source.name}-*"):
            shutil.rmtree(orphan, ignore_errors=True)
        if not force and _installed(source, target, revision):
            print(f"blame-bench: the {source.name} dataset is already in the cache ({target}), verified; "
                  "not downloaded again", file=sys.stderr)
            return target
        print(f"blame-bench: downloading the {source.name} dataset ({what}) from {where} into {target}", file=sys.stderr)
        staging = Path(tempfile.mkdtemp(prefix=f".partial-{source.name}-", dir=root))
        try:
            folder = download(staging)
            record = {"url": url, "revision": revision, "fetched_at": _now()}
            (folder / SOURCE_RECORD).write_text(json.dumps(record, indent=1), encoding="utf-8")
            if target.exists():
                target.rename(staging / "replaced")
            folder.rename(target)
            return target
        except DatasetVerificationError:
            raise
        except Exception as error:  # network, HTTP status, truncated or malformed archive, full disk
            raise DatasetNotFoundError(
                f"Downloading the {source.name} dataset ({what}) from {where} failed ({_short(error)}); "
                f"nothing was kept in {root}.{hint}"
            ) from error
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def fetch_github(source: DatasetSource, progress: bool = True, force: bool = False) -> Path:
    """``<cache>/<name>`` holding the pinned archive of ``source``, downloaded, unpacked and
    verified unless a verified copy is there (and not ``force``)."""
    url = archive_url(source)
    repo = source.github.split("/")[1]
    top = f"{repo}-{source.revision}"

    def download(staging: Path) -> Path:
        pooch.get_logger().setLevel("WARNING")  # not the "use this known_hash" hint: archives are not byte-stable
        with _Bar(ncols=79, unit="B", unit_scale=True, disable=not progress) as bar:
            archive = pooch.retrieve(url, known_hash=None, fname=f"{top}.tar.gz", path=staging,
                                     downloader=pooch.HTTPDownloader(progressbar=bar, timeout=60))
        _check_members(archive)
        pooch.Untar(extract_dir=str(staging / "unpacked"))(archive, "download", None)
        inside = f"{top}/{source.subfolder}" if source.subfolder else top
        folder = staging / "unpacked" / inside
        if not folder.is_dir():
            held = ", ".join(sorted(p.name + "/" for p in (staging / "unpacked").iterdir())) or "nothing"
            raise DatasetVerificationError(
                f"The archive {url} has no folder {inside}/ (its top level holds {held}); nothing was kept. "
                f"Point {source.env_var} at a clone of {source.github} at {source.revision[:12]}."
            )
        check = verify(source, folder)
        if not check.ok:
            raise DatasetVerificationError(
                f"{check.listing(lambda name: f'{inside}/{name}')} in the archive {url}, checked against "
                f"{MANIFEST_PATH.name}; nothing was kept. Point {source.env_var} at a clone of {source.github} "
                "at that commit (used as it is, recorded as not verified)."
            )
        return folder

    hint = (f" Set BLAME_BENCH_MIRROR to another download base, or "
            f"{source.remedy.removeprefix(f'run `blame data fetch {source.name}`, or ')}.")
    return _fetch_into_cache(source, source.revision, f"{source.github}@{source.revision[:12]}", url, url, hint,
                             force, download)


class _Bar(tqdm):
    """The download's progress bar, owned here so that a failed download closes it (ending its
    line) before the error is printed, and it is never drawn again. pooch tests the bar's truth
    before each use and tqdm's is ``total > 0``: always true here (an archive may come without
    a length)."""

    def __bool__(self) -> bool:
        return True


def _check_members(archive: str) -> None:
    """Refuse an archive with a member outside its folder or other than a file or a folder
    (pooch unpacks without tarfile's ``data`` filter on Python < 3.12)."""
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if member.name.startswith("/") or ".." in Path(member.name).parts or not (member.isfile() or member.isdir()):
                raise ValueError(f"unsafe archive member {member.name!r}")


def fetch_hub(source: DatasetSource, revision: str, progress: bool = True, force: bool = False) -> Path:
    """``<cache>/<name>`` holding ``source.hub_repo`` at ``revision`` from the Hugging Face Hub,
    downloaded unless a copy recorded at that revision is there (and not ``force``)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.utils import disable_progress_bars, enable_progress_bars

    def download(staging: Path) -> Path:
        (enable_progress_bars if progress else disable_progress_bars)()
        folder = staging / "data"
        snapshot_download(repo_id=source.hub_repo, repo_type="dataset", revision=revision,
                          local_dir=folder, allow_patterns=HUB_FILES)
        shutil.rmtree(folder / ".cache", ignore_errors=True)  # huggingface_hub's own bookkeeping
        missing = [name for name in HUB_FILES[:2] if not (folder / name).is_file()]
        if missing:
            raise FileNotFoundError(f"the revision holds no {', '.join(missing)}")
        return folder

    url = f"https://huggingface.co/datasets/{source.hub_repo}"
    return _fetch_into_cache(source, revision, f"{source.hub_repo}@{revision}", "the Hugging Face Hub", url, "",
                             force, download)


def _short(error: Exception) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= 240 else text[:237] + "..."


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
