from .provider import client


def send_all(recipients, subject, body):
    client.send(to=recipients, subject=subject, body=body)
