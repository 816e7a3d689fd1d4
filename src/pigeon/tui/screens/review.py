"""The review of a draft after the editor: From, To, Cc, Subject, the attached files and the first lines the user
wrote (the quote counted), all cleaned; then send, edit again, change To or Cc, attach or remove a file, postpone or
discard (keys of the registry's ``review`` scope). Every change goes through the core's hand-off; a failed send
stays here with its reason, the draft kept. Dismisses with what became of the draft: ``sent``, ``edit``,
``postponed``, ``discarded``."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from pigeon.core.compose import BadDraft
from pigeon.core.drafts import AttachedTooBig, MailDraft, Review, SendFailed, UnknownDraft
from pigeon.core.mail import MailCore
from pigeon.tui import fast_path
from pigeon.tui.keys import bindings
from pigeon.tui.render import human_size, safe_line
from pigeon.tui.screens.modals import ConfirmScreen, PickScreen
from pigeon.tui.widgets.key_bar import KeyBar
from pigeon.tui.widgets.text_input import TextInput

Outcome = str


class ReviewScreen(ModalScreen[Outcome]):
    """A draft shown before it goes; the user sends, edits, changes or keeps it."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("review")
    DEFAULT_CSS = """
    ReviewScreen .dialog.review { width: 100; max-width: 100%; }
    ReviewScreen #review-files { margin: 1 0 0 0; height: auto; }
    ReviewScreen #review-body-box { margin: 1 0 0 0; height: 1fr; min-height: 2; }
    ReviewScreen #review-body, ReviewScreen #review-said, ReviewScreen #review-field { height: auto; }
    """

    def __init__(self, core: MailCore, draft: MailDraft) -> None:
        super().__init__()
        fast_path.attach(self)  # a letter typed in a field draws its lines and the candidates', not the screen
        self.core = core
        self.draft = draft
        self.shown: Review | None = None
        self.sending = False
        self.typing = ""
        """What the open field changes: ``To``, ``Cc``, ``attach``; empty when none is open."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog review", id="review"):
            yield Static(Content.styled("Review before sending", "bold"), markup=False)
            yield Static("", id="review-headers", markup=False)
            yield Static("", id="review-files", markup=False)
            with VerticalScroll(id="review-body-box", can_focus=False):  # (the body gives way: the field stays in view)
                yield Static("", id="review-body", markup=False)
            yield Static("", id="review-said", markup=False)
            yield Vertical(id="review-field")
        yield KeyBar()

    def on_mount(self) -> None:
        self.show_draft()

    # --- what is shown ------------------------------------------------------------------------------------------

    def show_draft(self) -> None:
        self.run_worker(self._review_now(), group="review-show", exclusive=True, exit_on_error=False)

    async def _review_now(self) -> None:
        try:
            shown = await self.core.handoff.review(self.draft)
        except (UnknownDraft, OSError) as exc:
            self.say(f"The draft cannot be read: {exc}")
            return
        self.shown = shown
        rows = [
            ("From", shown.sender),
            ("To", shown.to or "(nobody yet: t)"),
            ("Cc", shown.cc),
            ("Subject", shown.subject),
        ]
        headers = [
            Content.assemble(Content.styled(f"{name}: ".ljust(9), "bold"), safe_line(value, limit=300))
            for name, value in rows
            if value or name != "Cc"
        ]
        self.query_one("#review-headers", Static).update(Content("\n").join(headers))
        files = [
            Content.assemble("  ", safe_line(name, limit=60), Content.styled(f"  {human_size(size)}", "dim"))
            for name, size in shown.files
        ]
        title = Content.styled("Attached:" if files else "No attached files (a attaches one)", "bold")
        self.query_one("#review-files", Static).update(Content("\n").join([title, *files]))
        body = [safe_line(line, limit=200, style="dim") for line in shown.body]
        if not body:
            body.append(Content.styled("(nothing written yet)", "italic $text-warning"))
        for count, words in ((shown.more, "… {} more line{}"), (shown.quoted, "┄ and {} quoted line{} ┄")):
            if count:
                body.append(Content.styled(words.format(f"{count:,}", "s" if count != 1 else ""), "dim italic"))
        self.query_one("#review-body", Static).update(Content("\n").join(body))

    def say(self, text: str, *, error: bool = True) -> None:
        """A line under the draft (why something was refused), cleaned: said there alone, where it is read with
        the draft (a note as well covered the review's right edge and said it twice)."""
        said = safe_line(text, limit=400, style="bold $text-error" if error else "")
        self.query_one("#review-said", Static).update(said)

    # --- the keys ---------------------------------------------------------------------------------------------

    def action_send(self) -> None:
        if not self.sending:  # (a second y while the first is on its way sends nothing twice)
            self.sending = True
            self.run_worker(self._send_now(), group="review-send", exit_on_error=False)

    async def _send_now(self) -> None:
        self.say("Sending...", error=False)
        try:
            said = await self.core.handoff.send(self.draft)
        except SendFailed as exc:
            self.sending = False
            self.say(str(exc))
            return
        self.notify(said, markup=False)
        self.dismiss("sent")

    def action_edit(self) -> None:
        if not self.sending:
            self.dismiss("edit")

    def action_postpone(self) -> None:
        self.notify(f"Kept in drafts: D finds it again (pigeon drafts: {self.draft.id})", markup=False)
        self.dismiss("postponed")

    def action_discard(self) -> None:
        def answer(yes: bool | None) -> None:
            if yes:
                self.run_worker(self._discard_now(), group="review-send", exit_on_error=False)

        question = Content("Discard this draft? It is not sent and not kept.")
        self.app.push_screen(ConfirmScreen(question, yes="Discard", no="Keep", safe_first=True), answer)

    async def _discard_now(self) -> None:
        try:
            await self.core.handoff.discard(self.draft)
        except OSError as exc:
            self.say(f"Could not discard the draft: {exc}")
            return
        self.notify("Discarded the draft.", markup=False)
        self.dismiss("discarded")

    def action_addresses(self, name: str) -> None:
        shown = self.shown
        value = (shown.to if name == "To" else shown.cc) if shown else ""
        self.open_field(name, f"{name}: addresses, comma-separated (enter keeps, esc closes)", value)

    def action_attach(self) -> None:
        self.open_field("attach", "Attach: the path of a file (enter attaches, esc closes)", "")

    def action_detach(self) -> None:
        files = self.shown.files if self.shown else ()
        if not files:
            self.say("No file is attached.")
            return
        if len(files) == 1:
            self.remove_file(0)
            return
        items = [safe_line(name, limit=60) for name, _ in files]

        def chosen(index: int | None) -> None:
            if index is not None:
                self.remove_file(index)

        self.app.push_screen(PickScreen("Remove which file?", items), chosen)

    def remove_file(self, index: int) -> None:
        self.run_worker(self._remove_now(index), group="review-change", exit_on_error=False)

    async def _remove_now(self, index: int) -> None:
        try:
            self.draft = await self.core.handoff.detach(self.draft, index)
        except (IndexError, UnknownDraft, OSError) as exc:
            self.say(f"Could not remove the file: {exc}")
            return
        self.say("Removed the file.", error=False)
        self.show_draft()

    def action_back(self) -> None:
        if self.typing:
            self.close_field()
        else:
            self.action_postpone()

    # --- the field the user types in ----------------------------------------------------------------------------

    def address_field(self, value: str) -> Input:
        """The field a To or Cc is typed in (the one place it is made): it completes from the address book."""
        from pigeon.tui.widgets.address_input import AddressInput

        book = self.core.address_book
        return AddressInput(
            value, lookup=book.lookup, lookup_at_once=book.lookup_at_once, prepare=book.prepare, id="review-input"
        )

    def open_field(self, typing: str, label: str, value: str) -> None:
        self.close_field()
        self.typing = typing
        field = self.query_one("#review-field", Vertical)
        made = self.address_field(value) if typing in {"To", "Cc"} else TextInput(value, id="review-input")
        field.mount(Static(Content.styled(label, "dim"), markup=False), made)
        made.focus()

    def close_field(self) -> None:
        self.typing = ""
        self.query_one("#review-field", Vertical).remove_children()
        self.set_focus(None)  # (the review's keys again)

    @on(Input.Submitted, "#review-input")
    def submitted(self, event: Input.Submitted) -> None:
        event.stop()
        typing, value = self.typing, event.value
        self.run_worker(self._change_now(typing, value), group="review-change", exit_on_error=False)

    async def _change_now(self, typing: str, value: str) -> None:
        handoff = self.core.handoff
        try:
            if typing == "attach":
                self.draft = await handoff.attach_file(self.draft, value)
            else:
                await handoff.set_addresses(self.draft, typing, value)
        except (BadDraft, AttachedTooBig, UnknownDraft, OSError) as exc:
            self.say(f"Not changed: {exc}")
            return
        self.close_field()
        self.say("Attached." if typing == "attach" else f"{typing} changed.", error=False)
        self.show_draft()
