"""The one mapping of the agent's conditions (internal/agent/errors.go) to
Python's exceptions: OSError with the errno that makes Python pick its
subclass (FileNotFoundError, FileExistsError, PermissionError, ...), and
ConnectionError for a service or worker that could not be reached, whose
message names the address."""

from __future__ import annotations

import errno

_ERRNO = {
    "not_found": errno.ENOENT,
    "no_namespace": errno.ENOENT,
    "exists": errno.EEXIST,
    "permission": errno.EACCES,
    "unauthenticated": errno.EACCES,
    "root": errno.EPERM,
    "not_dir": errno.ENOTDIR,
    "parent_not_dir": errno.ENOTDIR,
    "is_dir": errno.EISDIR,
    "not_empty": errno.ENOTEMPTY,
    "invalid_path": errno.EINVAL,
    "invalid_argument": errno.EINVAL,
    "rename_loop": errno.EINVAL,
    "lease_conflict": errno.EBUSY,
    "no_lease": errno.ESTALE,
    "changed": errno.ESTALE,
    "unsupported": errno.EOPNOTSUPP,
    "timeout": errno.ETIMEDOUT,
}


def error_from(cond: str, msg: str) -> Exception:
    """Returns the exception of a failed call's condition and message."""
    if cond == "unavailable":
        return ConnectionError(msg)
    return OSError(_ERRNO.get(cond, errno.EIO), msg)
