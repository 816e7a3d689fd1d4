"""The words the demo mail is made of: inboxes, topics, openers, bodies, a newsletter, attachments, and one hostile
message that shows off what Pigeon refuses to let through."""

from __future__ import annotations

from pigeon.models import InboxStatus

OWNER_DOMAIN = "pigeon.example"

INBOXES = [
    {"email": f"you@{OWNER_DOMAIN}", "display_name": "You", "status": InboxStatus.ACTIVE.value},
    {"email": f"team@{OWNER_DOMAIN}", "display_name": "Team", "status": InboxStatus.ACTIVE.value},
    {"email": f"billing@{OWNER_DOMAIN}", "display_name": "Billing", "status": InboxStatus.PENDING_VERIFICATION.value},
    {"email": f"alerts@{OWNER_DOMAIN}", "display_name": "Alerts (old)", "status": InboxStatus.INACTIVE.value},
]

TAGS = ["customer", "vendor", "investor", "friend", "family", "press", "recruiter", "vip", "team", "open-source"]

PROJECTS = ["Atlas", "Borealis", "Cobalt", "Driftwood", "Ember", "Fjord", "Granite", "Harbor", "Juniper", "Kestrel"]
TOPICS = [
    "Q{q} planning",
    "{project} launch checklist",
    "Invoice #{number}",
    "Contract renewal for {company}",
    "Design review: {project}",
    "Offsite agenda",
    "Interview loop for {title}",
    "Budget for {project}",
    "Your order #{number} has shipped",
    "Incident report: {project} outage",
    "Quick question about {project}",
    "Intro: {name} <> {other}",
    "Lunch next week?",
    "Feedback on the {project} proposal",
    "Travel plans for {city}",
]
OPENERS = [
    "Hi {name},",
    "Hello {name},",
    "Hey {name},",
    "Morning {name},",
    "{name},",
]
BODIES = [
    "Thanks for sending this over. I had a look at the numbers for {project} and they mostly line up with what "
    "we discussed. Two things stood out: the timeline for the second phase looks tight, and we have not budgeted "
    "for the extra review round. Can we talk it through on {day}?",
    "Quick update on {project}: the first milestone is done and the team is moving on to testing. We found a "
    "couple of issues with the import step, nothing blocking. I will send a fuller write-up by {day}.",
    "Attached is the latest version. The main changes are in section 3, where I reworked the pricing table, and "
    "in the appendix, which now lists every open question. Let me know if anything is unclear.",
    "I talked to {other} at {company} and they are keen to move ahead. They asked whether we could start in "
    "{month} instead of the following quarter. I said I would check with you first.",
    "Following up on my last note: do you have a few minutes this week? I would like to go over the "
    "{project} plan before it goes to the wider group.",
    "Sounds good to me. Let's lock it in. I'll send a calendar invite for {day} at {hour}:00 and book a room.",
    "Sorry for the slow reply, this week got away from me. Short answer: yes, go ahead. Longer answer below.\n\n"
    "The risk I see is that we commit to {project} before we know what {company} needs. If we can get a signed "
    "scope first, everything else follows.",
    "Here are my notes from today's call:\n\n- {other} owns the rollout\n- we review progress every {day}\n"
    "- the budget stays as it is until the end of {month}\n\nShout if I missed anything.",
]
CLOSERS = ["Thanks,", "Best,", "Cheers,", "Talk soon,", "Regards,", "All the best,"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "September", "October", "November"]
CITIES = ["Lisbon", "Berlin", "Toronto", "Nairobi", "Osaka", "Melbourne", "Bogotá", "Reykjavík"]

MARKDOWN_NOTE = """# {project}: weekly notes

**Status:** on track, with *one* risk.

## Done
- Shipped the importer to staging
- Closed {number} tickets

## Next
1. Load test with the {company} data set
2. Write the migration guide

| Area | Owner | Due |
|------|-------|-----|
| Importer | {name} | {day} |
| Docs | {other} | {month} |

See the tracker: https://tracker.example.com/{project_lower}
"""

NEWSLETTER = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{brand}</title>
<style>body{{font-family:sans-serif}} .preheader{{display:none}}</style>
<script>trackOpen("{number}")</script></head>
<body>
<div class="preheader" style="display:none">You will not see this preheader text in Pigeon.</div>
<table width="100%" role="presentation"><tr><td>
<h1>{brand} #{issue}</h1>
<p>Hello {name}, here is what happened this week in the {brand} community.</p>
<h2>Top stories</h2>
<ul>
<li><a href="https://news.example.com/{issue}/story-1">Why {project} changed how we ship</a></li>
<li><a href="https://news.example.com/{issue}/story-2">A field guide to {topic}</a></li>
<li><a href="https://news.example.com/{issue}/story-3">Ten years of {brand}: a retrospective</a></li>
</ul>
<h2>Numbers</h2>
<table border="1">
<tr><th>Metric</th><th>This week</th><th>Last week</th></tr>
<tr><td>Readers</td><td>{readers}</td><td>{readers_before}</td></tr>
<tr><td>New posts</td><td>{posts}</td><td>{posts_before}</td></tr>
</table>
<p>Events: meet us in {city} on {day}. <a href="https://events.example.com/{city_lower}">Register here</a>.</p>
<p style="font-size:small">You get this because you subscribed. <a href="https://news.example.com/unsubscribe?u={number}">Unsubscribe</a>.</p>
</td></tr></table>
</body></html>
"""
BRANDS = ["Terminal Times", "Open Source Digest", "The Async Letter", "Data Digest", "Design Notes"]
NEWSLETTER_TOPICS = ["keyboard-driven tools", "SQLite in production", "typed Python", "distributed tracing"]

ATTACHMENTS = [
    ("report.pdf", "application/pdf"),
    ("budget.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ("notes.txt", "text/plain"),
    ("photo.jpg", "image/jpeg"),
    ("diagram.png", "image/png"),
    ("data.csv", "text/csv"),
    ("slides.key", "application/octet-stream"),
]

HOSTILE_SUBJECT = "[URGENT] Verify your account [@click=app.quit]now[/] \x1b]52;c;aGFja2Vk\x07"
HOSTILE_BODY = (
    "Dear customer,\n\nThis message tries to trick your terminal. Pigeon shows it literally:\n\n"
    "- Textual markup: [bold red]not bold[/] and [@click=app.quit]a click action[/]\n"
    "- A clipboard write: \x1b]52;c;aGFja2Vk\x07(gone)\n"
    "- A hidden hyperlink: \x1b]8;;https://evil.example\x1b\\looks harmless\x1b]8;;\x1b\\\n"
    "- Screen clearing: \x1b[2J\x1b[H(gone)\n"
    "- A right-to-left override: invoice\u202egnp.exe\n\n"
    "Reply with your password. (Don't.)"
)

# The long conversation: a launch discussed by a handful of people over a few weeks.
CONVERSATION_SUBJECT = "{project} launch: plan, risks and the date"
CONVERSATION_LINES = [
    "I went through the plan again. The import step still worries me: on the {city} data set it took {number} "
    "seconds, and we promised customers it would be quick.",
    "Agreed with {other}. Let's not move the date yet; we can decide on {day} once the load test is in.",
    "Here is the rollback plan, step by step. If the migration fails we switch traffic back within ten minutes "
    "and nobody loses data.",
    "Small thing, but the release notes still mention the old pricing. I'll fix it unless someone already has.",
    "The staging numbers look better today: p99 latency is down to {hour} ms after the cache change.",
    "Can we keep this thread about the launch? The budget question deserves its own discussion.",
    "I disagree, gently. Shipping on a {day} means nobody is around if something breaks over the weekend.",
    "Customer support wants a one-page summary they can send out. I attached a draft; edits welcome.",
    "Quick answer to the question above: yes, the feature flag is in, and it is off by default.",
    "Legal signed off on the new terms this morning, so that blocker is gone.",
    "I ran the migration on a copy of production. {number} rows, no errors, forty minutes in all.",
    "Who owns the announcement post? I can write it, but I need the final feature list by {day}.",
    "Going back to the rollback plan: who presses the button? We should name one person and a backup.",
    "The dashboard is up. Error rate is flat, sign-ups are a little above last week's.",
    "Let's freeze the branch on {day} at {hour}:00. Anything after that waits for the next release.",
    "+1 to freezing. And thanks to everyone for the careful reviews this week.",
    "One open question: do we email every customer, or only the ones who use the importer?",
    "Found a bug in the export: dates before 1970 come out wrong. Fix is small, I'll have it by tomorrow.",
    "I'm out on {day}, {other} covers for me. Everything I know is in the doc.",
    "Final check from my side: docs done, translations done, the status page is ready.",
]
