import { Member } from "./team";

export interface Task {
  id: string;
  title: string;
  assigneeId: string;
}

export function taskCard(task: Task, _members: Member[]): string {
  return `<li data-id="${task.id}">${task.title}</li>`;
}
