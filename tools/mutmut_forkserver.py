"""For ``make mutate``: a process mutmut forks starts its own multiprocessing forkserver.

mutmut runs its stats pass in its own process and then forks that process once per mutant. The
bench's workers come from multiprocessing's ``forkserver``, a per-process singleton: the stats
pass starts one as a child of mutmut's process, and a forked child inherits the singleton with
that server's pid. The child's next bench then fails in ``ForkServer.ensure_running``, whose
``os.waitpid`` on a process that is not the child's own raises ``ChildProcessError`` (ECHILD),
and every test that runs a bench fails whatever the mutant: its mutants would count as killed
by the harness, not by a test. ``tools/mutate.py`` puts this module into the staging copy's
``tests/support/`` and imports it in the staged ``tests/conftest.py``; from then on a forked
child forgets the inherited server (the parent keeps it) and starts its own when it needs one,
which exits with the child. It follows the CPython 3.11 ``multiprocessing.forkserver`` internals.
"""

import os
import threading
from multiprocessing import forkserver
from typing import Any


def _forget_the_parents_forkserver() -> None:
    server: Any = forkserver._forkserver  # (private members: typeshed has none of them)
    if server._forkserver_alive_fd is not None:
        os.close(server._forkserver_alive_fd)  # the parent's server lives while the parent holds its end
    server._forkserver_address = None
    server._forkserver_alive_fd = None
    server._forkserver_pid = None
    server._lock = threading.Lock()  # (held by another thread at the fork, it would never be released here)


os.register_at_fork(after_in_child=_forget_the_parents_forkserver)
