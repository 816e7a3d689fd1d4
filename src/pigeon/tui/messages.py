"""App-wide messages: screens report up with these (they bubble to the App), and the App tells screens of changes
with them (posted to each screen). Widget messages stay nested in their widgets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from pigeon.core.drafts import MailDraft
    from pigeon.models import Contact
    from pigeon.models.events import WebhookEvent


class Failed(Message):
    """A worker failed; the App says what went wrong and what to do (in one place)."""

    def __init__(self, error: BaseException, doing: str) -> None:
        super().__init__()
        self.error = error
        self.doing = doing


class LoggedIn(Message):
    """A token was checked and kept; ``warning`` says if it could not be kept for later."""

    def __init__(self, warning: str = "") -> None:
        super().__init__()
        self.warning = warning


class EditContact(Message):
    """Open the contact editor on ``contact``."""

    def __init__(self, contact: Contact) -> None:
        super().__init__()
        self.contact = contact


class ContactSaved(Message, bubble=False):
    """A contact changed on the service: show the new version (posted to every screen)."""

    def __init__(self, contact: Contact) -> None:
        super().__init__()
        self.contact = contact


class InboxesChanged(Message, bubble=False):
    """An inbox was created: show the new list (posted to every screen)."""


class Offline(Message, bubble=False):
    """The service could not be reached (posted to every screen)."""


class LiveEvent(Message, bubble=False):
    """A verified webhook event arrived."""

    def __init__(self, webhook: WebhookEvent) -> None:
        super().__init__()
        self.webhook = webhook


class BrowseInTerminal(Message):
    """Hand the terminal to a console browser on a link while the app is suspended (the App does it)."""

    def __init__(self, command: list[str], link: str) -> None:
        super().__init__()
        self.command = command
        self.link = link


class EditDraft(Message):
    """Hand the terminal to the user's editor on a draft, then review or send what was written (the App does it).
    ``again``: from the review, which it returns to whatever the editor did."""

    def __init__(self, draft: MailDraft, *, again: bool = False) -> None:
        super().__init__()
        self.draft = draft
        self.again = again


class ReviewDraft(Message):
    """Review a kept draft, to edit, send, postpone or discard it (the App does it)."""

    def __init__(self, draft: MailDraft) -> None:
        super().__init__()
        self.draft = draft
