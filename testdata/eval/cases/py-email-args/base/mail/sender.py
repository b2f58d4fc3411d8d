import smtplib
from email.message import EmailMessage


def send_email(to, subject, body):
    msg = EmailMessage()
    msg["To"] = to
    msg["Subject"] = subject
    msg.set_content(body)
    with smtplib.SMTP("localhost") as s:
        s.send_message(msg)
