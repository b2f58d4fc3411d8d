from mail.sender import send_email


def acknowledge(ticket):
    send_email(ticket.email, f"We received your request #{ticket.id}.", f"Ticket #{ticket.id}",
               reply_to="support@acme.example")
