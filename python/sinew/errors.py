"""Sinew's exceptions. Each also derives from the built-in exception a Python
caller would catch for that kind of mistake (``ValueError``, ``KeyError``,
``RuntimeError``); every message is Sinew's own and names the group, field or
argument and the value."""


class SinewError(Exception):
    """Every error Sinew raises derives from this."""


class ConfigError(SinewError, ValueError):
    """A group, field or value of the configuration is wrong."""


class ShapeError(SinewError, ValueError):
    """An array has the wrong shape or memory order."""


class UnknownNameError(SinewError, KeyError):
    """No group, parameter, state or plane has this name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class GpuError(SinewError, RuntimeError):
    """No GPU adapter, or the device failed."""


__all__ = ["SinewError", "ConfigError", "ShapeError", "UnknownNameError", "GpuError"]
