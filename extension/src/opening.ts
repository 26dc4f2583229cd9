// The words of "Continue an Agent Session": the first exchange of the chat it opens, and how old a
// session is. No `vscode` import (unit-tested in node).

import { AgentSessionInfo } from './wire';

/**
 * The chat's first exchange. Its answer carries the session's token (the backend made it, and
 * recognises it when the conversation's history comes back), and tells the user what the chat is.
 * The agent is never sent this exchange: it has the session's own history.
 */
export function openingExchange(agentName: string, session: AgentSessionInfo): { request: string; response: string } {
  const title = session.title ? `“${session.title}”` : session.sessionId;
  const when = session.updatedAt ? `, last active ${new Date(session.updatedAt).toLocaleString()}` : '';
  return {
    request: `Continue the ${agentName} session ${title}`,
    response:
      `This chat continues ${agentName}'s session ${title} (in ${session.cwd}${when}). ` +
      `${agentName} has its earlier messages; what you write next goes on from there.\n\n\`${session.token}\``,
  };
}

/** "3 minutes ago", "2 days ago": how long since the session was active. */
export function sessionAge(updatedAt: string | null, now: number): string {
  const then = updatedAt ? Date.parse(updatedAt) : NaN;
  if (Number.isNaN(then)) {
    return '';
  }
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  const units: [number, string][] = [[86_400, 'day'], [3_600, 'hour'], [60, 'minute']];
  for (const [size, name] of units) {
    if (seconds >= size) {
      const n = Math.floor(seconds / size);
      return `${n} ${name}${n === 1 ? '' : 's'} ago`;
    }
  }
  return 'just now';
}
