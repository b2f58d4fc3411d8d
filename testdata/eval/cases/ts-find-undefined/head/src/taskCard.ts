import { Member, findMember } from "./team";

export interface Task {
  id: string;
  title: string;
  assigneeId: string;
}

export function taskCard(task: Task, members: Member[]): string {
  const assignee = findMember(members, task.assigneeId)!;
  return `<li data-id="${task.id}">${task.title} <span>${assignee.name}</span></li>`;
}
