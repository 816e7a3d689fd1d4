"""Contacts on screen: the book (:mod:`.book`) and the editor (:mod:`.editor`); the form they edit is
:mod:`pigeon.core.contacts`."""
