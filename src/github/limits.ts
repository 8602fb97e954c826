/** GitHub refuses longer issue and comment bodies (characters). */
export const COMMENT_LIMIT = 65_536;
