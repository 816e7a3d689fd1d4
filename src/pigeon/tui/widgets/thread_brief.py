"""The brief at the top of the reader: what is new in the open thread since the user last read it (who wrote, the
newest messages' first words, the dates, amounts, links and files in them), made by :mod:`pigeon.core.brief` from
the view's messages (a long thread's newest new ones read a page at a time). Stays in place while the thread
scrolls; hidden when nothing is new, or the thread has one message."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from textual import work
from textual.content import Content
from textual.widgets import Static
from textual.worker import get_current_worker

from pigeon.core.brief import NEWEST, Brief, brief
from pigeon.core.conversation import is_new
from pigeon.core.paged import PagedMessages, heads
from pigeon.sanitize import clean_line
from pigeon.tui.render import relative_time, sender_name

if TYPE_CHECKING:
    from pigeon.tui.widgets.thread_view import ThreadView


def brief_of(view: ThreadView, read_at: datetime | None) -> Brief | None:
    """The brief of ``view`` for a read at ``read_at`` (kept on the view: worked out once, in a worker if laid out
    ahead). None when the thread has one message or nothing new."""
    if view.briefed is not None and view.briefed[0] == read_at:
        return view.briefed[1]
    messages = view.messages
    new = [place for place, head in enumerate(heads(messages)) if is_new(head, read_at)]
    found: Brief | None = None
    if len(messages) > 1 and new:
        newest = new[-NEWEST:]
        if isinstance(messages, PagedMessages):
            messages.fetch(newest)
        found = brief(
            [messages[place] for place in newest],
            len(new),
            lambda m: clean_line(sender_name(m, view.contacts), limit=40) or "(unknown sender)",
            read_before=read_at is not None,
        )
    view.briefed = (read_at, found)
    return found


class ThreadBrief(Static):
    """The brief's lines: the first says how much is new and from whom, a line a newest message, then what was found."""

    def show_for(self, view: ThreadView | None, read_at: datetime | None, room: int) -> None:
        """The brief of ``view`` (None: no thread): at once when it was worked out ahead, else worked out in a
        thread (a key never waits on it), the last one asked for alone shown."""
        self.workers.cancel_group(self, "brief")
        if view is None:
            self.show(None)
        elif view.briefed is not None and view.briefed[0] == read_at:
            self.show(view.briefed[1], view.clock(), room)
        else:
            self.show(None)
            self._work_out(view, read_at, room)

    @work(thread=True, exclusive=True, group="brief", exit_on_error=False, description="the brief of what is new")
    def _work_out(self, view: ThreadView, read_at: datetime | None, room: int) -> None:
        found = brief_of(view, read_at)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self.show, found, view.clock(), room)

    def show(self, found: Brief | None, now: datetime | None = None, room: int = 6) -> None:
        """Show ``found`` (None: hide), each message's time as the list says it as of ``now``, in ``room`` lines at
        most (a short reader keeps the first line and the last ones: what was found, the newest message)."""
        if found is None:
            self.set_class(False, "shown")
            self.update("")
            return
        lines = found.lines(lambda moment: relative_time(moment, now or datetime.now(UTC)))
        gists = len(found.gists)
        styled = [Content.styled(lines[0], "bold $text-accent")]
        styled += [Content(line) for line in lines[1 : 1 + gists]]
        styled += [Content.styled(line, "$text-muted") for line in lines[1 + gists :]]
        styled = styled[:1] + styled[1:][-max(room - 1, 1) :]
        self.update(Content("\n").join(styled))
        self.set_class(True, "shown")
