"""The C API's encrt_status codes as Python exceptions. Each is an EncrtError (its `status` is the
C code) and also the built-in exception a Python caller would expect: a bad argument is a
ValueError, a file that cannot be read an OSError, an exhausted allocation a MemoryError."""


class EncrtError(RuntimeError):
    """Any failure the encrt library reports; the message is the library's (encrt_last_error)."""
    status = None


class InvalidArgumentError(EncrtError, ValueError):
    status = 1


class EncrtIOError(EncrtError, OSError):
    status = 2


class InvalidModelError(EncrtError):
    status = 3


class UnsupportedError(EncrtError):
    status = 4


class EncrtMemoryError(EncrtError, MemoryError):
    status = 5


class InternalError(EncrtError):
    status = 6


_BY_STATUS = {cls.status: cls for cls in (InvalidArgumentError, EncrtIOError, InvalidModelError, UnsupportedError,
                                           EncrtMemoryError, InternalError)}


def raise_for_status(status, message):
    cls = _BY_STATUS.get(status, EncrtError)
    error = cls(message)
    if cls is EncrtError:
        error.status = status
    raise error
