from mail.sender import send_email


def welcome(user):
    send_email(user.email, "Welcome to Acme", f"Hello {user.name}, your account is ready.")
