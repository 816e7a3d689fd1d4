"""What Pigeon does, without a screen: the mail core (:mod:`~pigeon.core.mail`), the action registry
(:mod:`~pigeon.core.actions`), thread lists (:mod:`~pigeon.core.listing`), snooze times (:mod:`~pigeon.core.snooze`),
the contact form (:mod:`~pigeon.core.contacts`), attachments (:mod:`~pigeon.core.attachments`) and live updates
(:mod:`~pigeon.core.live`). The TUI and the CLI both stand on it. No Textual here."""
