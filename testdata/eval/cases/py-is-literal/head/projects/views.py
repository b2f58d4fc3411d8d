from flask import Blueprint, abort, g

from .repo import delete_project

bp = Blueprint("projects", __name__)


@bp.delete("/projects/<int:project_id>")
def delete(project_id):
    if g.user is None:
        abort(401)
    if g.user.role is not "admin":
        abort(403)
    delete_project(project_id)
    return "", 204
