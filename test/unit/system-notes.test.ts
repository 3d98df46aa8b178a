import { describe, expect, it } from 'vitest';
import {
  assigneeNote, confidentialityNote, labelReference, labelsNote, milestoneNote, milestoneReference, movedNote, stateChangeNote, titleNote,
} from '../../daemon/services/collaboration/system-notes.js';

describe('system note texts (GitLab 8.13 wording)', () => {
  it('state changes', () => {
    expect(stateChangeNote('closed')).toBe('Status changed to closed');
    expect(stateChangeNote('reopened')).toBe('Status changed to reopened');
    expect(stateChangeNote('merged', '!3')).toBe('Status changed to merged by !3');
  });
  it('assignee', () => {
    expect(assigneeNote('bob')).toBe('Reassigned to @bob');
    expect(assigneeNote(null)).toBe('Assignee removed');
  });
  it('labels: by id, singular and plural, added and removed', () => {
    expect(labelsNote([{ id: 4 }], [])).toBe('Added ~4 label');
    expect(labelsNote([], [{ id: 5 }])).toBe('Removed ~5 label');
    expect(labelsNote([{ id: 1 }], [{ id: 2 }, { id: 3 }])).toBe('Added ~1 and removed ~2 ~3 labels');
    expect(labelsNote(['Bug', 'two words'], [])).toBe('Added ~Bug ~"two words" labels');
    expect(labelsNote([], [])).toBe('');
    expect(labelReference('123')).toBe('~"123"');
  });
  it('milestone', () => {
    expect(milestoneNote({ iid: 3 })).toBe('Milestone changed to %3');
    expect(milestoneNote('v1.0')).toBe('Milestone changed to %v1.0');
    expect(milestoneNote(null)).toBe('Milestone removed');
    expect(milestoneReference('Sprint 1')).toBe('%"Sprint 1"');
  });
  it('title, move and confidentiality', () => {
    expect(titleNote('Old', 'New')).toBe('Changed title: **Old** → **New**');
    expect(movedNote('to', 'group/other#3')).toBe('Moved to group/other#3');
    expect(movedNote('from', 'group/project#2')).toBe('Moved from group/project#2');
    expect(confidentialityNote(true)).toBe('Made the issue confidential');
    expect(confidentialityNote(false)).toBe('Made the issue visible');
  });
});
