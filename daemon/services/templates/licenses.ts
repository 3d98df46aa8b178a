/**
 * The license templates of `GET /templates/licenses` (8.13: the licensee gem's 15 choosealicense.com licenses). The
 * texts come from the `spdx-license-list` package (the SPDX License List's texts); the choosealicense facts 8.13
 * showed beside them (popular, nickname, the permissions/conditions/limitations tags) are kept here, with a one-line
 * description of Gantry's own. A text is filled in as 8.13 did: the year, the project, and the copyright holder's
 * full name (the `fullname` param, else the caller's name); SPDX's `<copyright holders>` and `<owner>` count as the
 * holder too (the choosealicense texts said `[fullname]`).
 */
import { createRequire } from 'node:module';

interface SpdxLicense {
  name: string;
  url: string;
  osiApproved: boolean;
  licenseText: string;
}

/** One license as GET /templates/licenses shows it (8.13's RepoLicense entity). */
export interface LicenseTemplate {
  key: string;
  name: string;
  nickname: string | null;
  popular: boolean;
  html_url: string;
  source_url: string | null;
  description: string;
  conditions: string[];
  permissions: string[];
  limitations: string[];
  content: string;
}

const CORE = ['commercial-use', 'modifications', 'distribution', 'private-use'];
const PATENT = ['commercial-use', 'modifications', 'distribution', 'patent-use', 'private-use'];
const COPYLEFT = ['include-copyright', 'document-changes', 'disclose-source', 'same-license'];

/** 8.13's license keys in its order, with the SPDX ids to take the text from (the current id first). */
const LICENSES: ReadonlyArray<{
  key: string; spdx: string[]; nickname?: string; popular?: boolean; description: string;
  permissions: string[]; conditions: string[]; limitations: string[];
}> = [
  { key: 'agpl-3.0', spdx: ['AGPL-3.0-only', 'AGPL-3.0'], nickname: 'GNU AGPLv3', description: 'The GPLv3 with one more condition: whoever uses the software over a network must be offered its source, changes included.', permissions: PATENT, conditions: [...COPYLEFT.slice(0, 3), 'network-use-disclose', 'same-license'], limitations: ['no-liability'] },
  { key: 'apache-2.0', spdx: ['Apache-2.0'], popular: true, description: 'A permissive license that also grants the contributors\' patent rights and asks that changes be stated.', permissions: PATENT, conditions: ['include-copyright', 'document-changes'], limitations: ['trademark-use', 'no-liability'] },
  { key: 'artistic-2.0', spdx: ['Artistic-2.0'], description: 'The Perl license: the copyright holder keeps artistic control while others may use, change and share the package.', permissions: PATENT, conditions: ['include-copyright', 'document-changes'], limitations: ['no-liability', 'trademark-use'] },
  { key: 'bsd-2-clause', spdx: ['BSD-2-Clause'], description: 'A short permissive license: keep the copyright notice and the disclaimer.', permissions: CORE, conditions: ['include-copyright'], limitations: ['no-liability'] },
  { key: 'bsd-3-clause', spdx: ['BSD-3-Clause'], description: 'The 2-clause BSD license plus a clause forbidding the use of the holder\'s name to promote derived products.', permissions: CORE, conditions: ['include-copyright'], limitations: ['no-liability'] },
  { key: 'cc0-1.0', spdx: ['CC0-1.0'], description: 'Gives the work to the public domain as far as the law allows, and otherwise licenses it without conditions.', permissions: CORE, conditions: [], limitations: ['no-liability', 'trademark-use', 'patent-use'] },
  { key: 'epl-1.0', spdx: ['EPL-1.0'], description: 'A weak copyleft license from the Eclipse Foundation: changed source must be shared, larger works may use other licenses.', permissions: PATENT, conditions: ['disclose-source', 'include-copyright', 'same-license'], limitations: ['no-liability'] },
  { key: 'gpl-2.0', spdx: ['GPL-2.0-only', 'GPL-2.0'], nickname: 'GNU GPLv2', description: 'The strong copyleft license of Linux: whoever distributes the software or works based on it must share the source under the same license.', permissions: CORE, conditions: COPYLEFT, limitations: ['no-liability'] },
  { key: 'gpl-3.0', spdx: ['GPL-3.0-only', 'GPL-3.0'], nickname: 'GNU GPLv3', popular: true, description: 'The strong copyleft license: works based on the software are shared under the same license with their source, and contributors grant their patent rights.', permissions: PATENT, conditions: COPYLEFT, limitations: ['no-liability'] },
  { key: 'isc', spdx: ['ISC'], description: 'A permissive license equivalent to the 2-clause BSD and MIT licenses, in fewer words.', permissions: CORE, conditions: ['include-copyright'], limitations: ['no-liability'] },
  { key: 'lgpl-2.1', spdx: ['LGPL-2.1-only', 'LGPL-2.1'], nickname: 'GNU LGPLv2.1', description: 'A weak copyleft license for libraries: changes to the library are shared, programs that only link to it may use any license.', permissions: CORE, conditions: COPYLEFT, limitations: ['no-liability'] },
  { key: 'lgpl-3.0', spdx: ['LGPL-3.0-only', 'LGPL-3.0'], nickname: 'GNU LGPLv3', description: 'The GPLv3 with an exception for programs that only link to the library, which may use any license.', permissions: PATENT, conditions: COPYLEFT, limitations: ['no-liability'] },
  { key: 'mit', spdx: ['MIT'], popular: true, description: 'A permissive license that is short and to the point: keep the copyright and license notice, nothing else.', permissions: CORE, conditions: ['include-copyright'], limitations: ['no-liability'] },
  { key: 'mpl-2.0', spdx: ['MPL-2.0'], description: 'A weak copyleft license per file: changed files stay under the MPL, larger works may combine them with other code.', permissions: PATENT, conditions: ['disclose-source', 'include-copyright', 'same-license'], limitations: ['no-liability', 'trademark-use'] },
  { key: 'unlicense', spdx: ['Unlicense'], description: 'Gives the work to the public domain, without conditions.', permissions: CORE, conditions: [], limitations: ['no-liability'] },
];

let spdx: Readonly<Record<string, SpdxLicense>> | null = null;
function spdxLicenses(): Readonly<Record<string, SpdxLicense>> {
  return (spdx ??= createRequire(import.meta.url)('spdx-license-list/full') as Record<string, SpdxLicense>);
}

/** 8.13's placeholders (api/templates.rb), plus SPDX's spellings of the copyright holder. */
const PROJECT_PLACEHOLDER = /[<{[](project|description|one\sline\s.+\swhat\sit\sdoes\.)[>}\]]/gi;
const YEAR_PLACEHOLDER = /[<{[](year|yyyy)[>}\]]/gi;
const FULLNAME_PLACEHOLDER = /[<{[](fullname|name\sof\s(author|copyright\sowner)|copyright\sholders?|owner)[>}\]]/gi;

function template(entry: (typeof LICENSES)[number]): LicenseTemplate {
  const all = spdxLicenses();
  const id = entry.spdx.find((i) => all[i]);
  if (!id) throw new Error(`spdx-license-list has no text for ${entry.key}`);
  const license = all[id]!;
  return {
    key: entry.key, name: license.name, nickname: entry.nickname ?? null, popular: !!entry.popular,
    html_url: `http://choosealicense.com/licenses/${entry.key}/`, source_url: license.url || null, description: entry.description,
    conditions: entry.conditions, permissions: entry.permissions, limitations: entry.limitations, content: license.licenseText,
  };
}

/** The licenses (only the popular ones when `popular`), in 8.13's order. */
export function listLicenses(popular: boolean): LicenseTemplate[] {
  return LICENSES.filter((l) => !popular || l.popular).map(template);
}

/**
 * One license with its text filled in (8.13's parsed_license_template): the year, `project` where given, and the
 * holder's name (`fullname`, else the caller's, else left as it is). Null for an unknown key.
 */
export function findLicense(key: string, fill: { project?: string; fullname?: string; year?: number }): LicenseTemplate | null {
  const entry = LICENSES.find((l) => l.key === key.toLowerCase());
  if (!entry) return null;
  const t = template(entry);
  let content = t.content.replace(YEAR_PLACEHOLDER, String(fill.year ?? new Date().getUTCFullYear()));
  if (fill.project) content = content.replace(PROJECT_PLACEHOLDER, () => fill.project!);
  if (fill.fullname) content = content.replace(FULLNAME_PLACEHOLDER, () => fill.fullname!);
  return { ...t, content };
}
