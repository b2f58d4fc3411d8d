export interface Member {
  id: string;
  name: string;
  active: boolean;
}

/** Returns the member with id, or undefined when they left the team. */
export function findMember(members: Member[], id: string): Member | undefined {
  return members.find((m) => m.id === id && m.active);
}
