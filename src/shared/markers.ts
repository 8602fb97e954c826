/**
 * Our hidden markers (`<!-- agent-runner:sticky:… -->`, `<!-- agent-runner:approval:… -->`,
 * `<!-- agent-runner-review head=… -->`) tell a later run which comment or review is ours and what
 * it recorded. Agent text posted under the action's name must not carry one: it is shown as text.
 */
export function defuseOurMarkers(markdown: string): string {
  return markdown.replace(/<!--(\s*agent-runner[:-])/gi, "&lt;!--$1");
}
