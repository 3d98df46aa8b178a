/**
 * The .gitignore templates of `GET /templates/gitignores` (8.13 served github/gitignore's files). No npm package ships
 * that collection (the packages that name it download it at run time, which this daemon never does), so Gantry keeps
 * a small set of its own for the common languages and tools: each the usual build output, dependency folders, caches
 * and editor files of that tool. docs/decisions.md records the choice.
 */
const EDITORS = `# Editors and operating systems
.idea/
.vscode/
*.swp
*~
.DS_Store
Thumbs.db
`;

/** name -> content; the names are 8.13's (github/gitignore file names without the extension). */
export const GITIGNORES: Readonly<Record<string, string>> = {
  Actionscript: `# Build and debug output
bin-debug/
bin-release/
[Oo]bj/
[Bb]in/
*.swf
*.air
*.ipa
*.apk
`,
  Android: `# Built application files and Gradle
*.apk
*.ap_
*.dex
*.class
bin/
gen/
out/
build/
.gradle/
local.properties
captures/
.externalNativeBuild
*.iml
`,
  C: `# Objects, libraries and executables
*.o
*.ko
*.obj
*.elf
*.a
*.lib
*.so
*.so.*
*.dylib
*.dll
*.exe
*.out
*.app
*.d
*.gch
*.pch
*.dSYM/
`,
  'C++': `# Objects, libraries and executables
*.o
*.obj
*.slo
*.lo
*.a
*.lib
*.la
*.so
*.dylib
*.dll
*.exe
*.out
*.app
*.d
*.gch
*.pch
`,
  Elixir: `# Mix and its dependencies
/_build
/cover
/deps
/doc
erl_crash.dump
*.ez
`,
  Go: `# Binaries, test binaries and profiles
*.exe
*.exe~
*.dll
*.so
*.dylib
*.test
*.out
*.prof
/vendor/
`,
  Gradle: `.gradle
/build/
gradle-app.setting
!gradle-wrapper.jar
.gradletasknamecache
`,
  Haskell: `dist
dist-*
cabal-dev
*.o
*.hi
*.chi
*.chs.h
*.dyn_o
*.dyn_hi
.hpc
.hsenv
.cabal-sandbox/
cabal.sandbox.config
*.prof
*.aux
*.hp
.stack-work/
`,
  Java: `# Compiled classes, logs and packages
*.class
*.log
*.jar
*.war
*.ear
*.zip
*.tar.gz
hs_err_pid*
`,
  Maven: `target/
pom.xml.tag
pom.xml.releaseBackup
pom.xml.versionsBackup
pom.xml.next
release.properties
dependency-reduced-pom.xml
buildNumber.properties
.mvn/timing.properties
`,
  Node: `# Logs
logs
*.log
npm-debug.log*

# Runtime data
pids
*.pid
*.seed

# Coverage and build output
lib-cov
coverage
.nyc_output
build/Release

# Dependencies
node_modules
jspm_packages

# Caches
.npm
.eslintcache
.node_repl_history
`,
  Perl: `!Build/
.last_cover_stats
/META.yml
/META.json
/MYMETA.*
*.o
*.pm.tdy
*.bs
.build/
_build/
cover_db/
blib/
inc/
Build
Build.bat
Makefile
Makefile.old
pm_to_blib
`,
  PHP: `# Composer
/vendor/
composer.phar
# Caches and local configuration
.phpunit.result.cache
.env
`,
  Python: `# Byte-compiled files
__pycache__/
*.py[cod]
*$py.class

# C extensions
*.so

# Distribution and packaging
build/
develop-eggs/
dist/
downloads/
eggs/
.eggs/
lib/
lib64/
parts/
sdist/
var/
*.egg-info/
.installed.cfg
*.egg

# Tests and coverage
htmlcov/
.tox/
.coverage
.coverage.*
.cache
nosetests.xml
coverage.xml
.pytest_cache/

# Environments
.env
.venv
env/
venv/
`,
  Rails: `*.rbc
capybara-*.html
.rspec
/log
/tmp
/db/*.sqlite3
/db/*.sqlite3-journal
/public/system
/coverage/
/spec/tmp
**.orig
rerun.txt
pickle-email-*.html
config/initializers/secret_token.rb
config/secrets.yml
/.bundle
/vendor/bundle
.rvmrc
/public/assets
.byebug_history
`,
  Ruby: `*.gem
*.rbc
/.config
/coverage/
/InstalledFiles
/pkg/
/spec/reports/
/spec/examples.txt
/test/tmp/
/test/version_tmp/
/tmp/

# Documentation
/.yardoc/
/_yardoc/
/doc/
/rdoc/

# Environment
/.bundle/
/vendor/bundle
/lib/bundler/man/
.ruby-version
.ruby-gemset
.rvmrc
`,
  Rust: `# Build output
/target/
**/*.rs.bk
`,
  Scala: `*.class
*.log
# sbt
dist/*
target/
lib_managed/
src_managed/
project/boot/
project/plugins/project/
.history
.cache
.lib/
`,
  Swift: `# Xcode
build/
DerivedData/
*.pbxuser
!default.pbxuser
*.mode1v3
*.mode2v3
*.perspectivev3
xcuserdata/
*.moved-aside
*.xccheckout
*.xcscmblueprint
*.hmap
*.ipa
*.dSYM.zip
*.dSYM
# Swift Package Manager
.build/
Packages/
# CocoaPods and Carthage
Pods/
Carthage/Build
`,
  TeX: `*.aux
*.lof
*.log
*.lot
*.fls
*.out
*.toc
*.fmt
*.fot
*.cb
*.cb2
*.dvi
*.xdv
*-converted-to.*
*.pdf
*.bbl
*.bcf
*.blg
*-blx.aux
*-blx.bib
*.run.xml
*.fdb_latexmk
*.synctex
*.synctex.gz
`,
  VisualStudio: `# Build results
[Dd]ebug/
[Rr]elease/
x64/
x86/
[Bb]in/
[Oo]bj/
# User files
*.suo
*.user
*.userosscache
*.sln.docstates
.vs/
# NuGet
*.nupkg
**/packages/*
`,
  Editors: EDITORS,
};
