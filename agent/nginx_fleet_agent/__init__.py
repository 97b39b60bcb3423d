"""nginx-fleet agent: collects nginx and host metrics and pushes them to the control plane."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("nginx-fleet-agent")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"
