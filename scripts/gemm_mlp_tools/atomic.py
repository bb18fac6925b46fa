"""Files replaced whole, as engine/atomic_file.h writes the programs' files: a new version is
written beside the old one under a temporary name of its own (PATH.tmp.<pid>.<n>, created
exclusively), flushed to disk and renamed over it, then the folder is flushed. A write that fails
(a full disk) leaves the old file whole, and the error names the file and the system's reason.

    atomic_write(path, text_or_bytes)
    atomic_savefig(fig, path)        a matplotlib figure, the same way
    csv_text(rows, **writer_options) / csv_dict_text(fieldnames, rows, **writer_options)
"""
import csv
import io
import itertools
import os
import stat
import sys

_counter = itertools.count()


def _fail(path, what, err):
    sys.exit(f"{os.path.basename(sys.argv[0])}: cannot write {path}: {what}: "
             f"{err.strerror or err}; {path} is unchanged")


def _staged(path, write):
    """Runs write(tmp) for a fresh temporary name beside path, then renames it over path."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            sys.exit(f"{os.path.basename(sys.argv[0])}: {path} exists and is not a regular file; "
                     "refusing to replace it")
    except FileNotFoundError:
        pass
    tmp = f"{path}.tmp.{os.getpid()}.{next(_counter)}"
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        _fail(path, "writing it failed", e)
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as e:
        _fail(path, "written, but flushing its folder failed", e)


def atomic_write(path, data):
    def write(tmp):
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644),
                  "wb" if isinstance(data, bytes) else "w", newline="") as f:
            f.write(data)
    _staged(path, write)


def atomic_savefig(fig, path, **options):
    ext = os.path.splitext(path)[1].lstrip(".") or "png"
    _staged(path, lambda tmp: fig.savefig(tmp, format=ext, **options))


def csv_text(rows, **writer_options):
    out = io.StringIO()
    csv.writer(out, **writer_options).writerows(rows)
    return out.getvalue()


def csv_dict_text(fieldnames, rows, **writer_options):
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=fieldnames, **writer_options)
    w.writeheader()
    w.writerows(rows)
    return out.getvalue()
