import smtplib
from email.message import EmailMessage


def send_email(to, body, subject, reply_to=None):
    msg = EmailMessage()
    msg["To"] = to
    msg["Subject"] = subject
    if reply_to:
        msg["Reply-To"] = reply_to
    msg.set_content(body)
    with smtplib.SMTP("localhost") as s:
        s.send_message(msg)
