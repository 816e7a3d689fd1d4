"""What every Pigeon screen shares: failures of its workers go up to the App as one message."""

from __future__ import annotations

from textual.message_pump import MessagePump
from textual.worker import Worker, WorkerState

from pigeon.tui.messages import Failed


class ReportsFailures(MessagePump):
    """Mixed into a screen: its failed workers become :class:`~pigeon.tui.messages.Failed`, which the App words."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state is WorkerState.ERROR and worker.error is not None:
            self.post_message(Failed(worker.error, worker.description or worker.name or "working"))
