"""One owner for each C handle: freed by close(), by leaving a `with` block, or, as a fallback, when
the object is collected. A handle that borrows a model (session, tokenizer, task) keeps the Model
object alive, and Model.close() closes those first, as the C API requires."""


class Handle:
    _free = None  # the C function that frees this kind of handle
    _name = None  # what messages call it (default: the class name)

    def __init__(self):
        self._ptr = None

    @property
    def closed(self):
        return self._ptr is None

    def _handle(self):
        if self._ptr is None:
            raise ValueError(f"{self._name or type(self).__name__} is closed")
        return self._ptr

    def close(self):
        """Frees the C object now; later calls on this object raise ValueError. Idempotent."""
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            type(self)._free(ptr)

    def __enter__(self):
        self._handle()
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # At interpreter exit the library's function objects may already be gone: then the
        # process is ending anyway.
        try:
            self.close()
        except Exception:
            pass
