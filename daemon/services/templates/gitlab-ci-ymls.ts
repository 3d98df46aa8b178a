/**
 * The .gitlab-ci.yml templates of `GET /templates/gitlab_ci_ymls`. 8.13 served GitLab's own vendor/gitlab-ci-yml
 * files, which no npm package carries: Gantry keeps a small set of its own, written for the keywords its CI reads
 * (daemon/ci/config.ts: image, services, stages, before_script, script, cache, artifacts, only). Each begins with
 * 8.13's disclaimer line, as its request spec expects.
 */
const HEADER = '# This file is a template, and might need editing before it works on your project.\n';

/** name -> content. */
export const GITLAB_CI_YMLS: Readonly<Record<string, string>> = {
  Bash: `${HEADER}# Runs shell commands in a small image.
image: busybox:latest

before_script:
  - echo "Before script section"

build1:
  stage: build
  script:
    - echo "Do your build here"

test1:
  stage: test
  script:
    - echo "Do a test here"
`,
  Docker: `${HEADER}# Builds the image of the repository's Dockerfile with Docker in Docker.
image: docker:latest

services:
  - docker:dind

build:
  stage: build
  script:
    - docker build -t "$CI_PROJECT_NAME:$CI_BUILD_REF" .
`,
  Go: `${HEADER}image: golang:latest

stages:
  - test
  - build

format:
  stage: test
  script:
    - go fmt ./...
    - go vet ./...
    - go test ./...

compile:
  stage: build
  script:
    - go build -o "$CI_PROJECT_DIR/bin/app" ./...
  artifacts:
    paths:
      - bin/
`,
  Maven: `${HEADER}image: maven:3-jdk-8

cache:
  paths:
    - .m2/repository/

variables:
  MAVEN_OPTS: "-Dmaven.repo.local=.m2/repository"

verify:
  stage: test
  script:
    - mvn --batch-mode verify
`,
  Nodejs: `${HEADER}# Official Node.js image: https://hub.docker.com/_/node/
image: node:latest

cache:
  paths:
    - node_modules/

test:
  stage: test
  script:
    - npm install
    - npm test
`,
  PHP: `${HEADER}image: php:7

before_script:
  - apt-get update -yqq
  - apt-get install -yqq git unzip
  - curl -sS https://getcomposer.org/installer | php
  - php composer.phar install

test:
  stage: test
  script:
    - vendor/bin/phpunit
`,
  Python: `${HEADER}image: python:latest

cache:
  paths:
    - .cache/pip

variables:
  PIP_CACHE_DIR: "$CI_PROJECT_DIR/.cache/pip"

before_script:
  - python -V
  - pip install -r requirements.txt

test:
  stage: test
  script:
    - python -m unittest discover
`,
  Ruby: `${HEADER}# Official language image: https://hub.docker.com/r/_/ruby/
image: ruby:2.3

cache:
  paths:
    - vendor/ruby

before_script:
  - ruby -v
  - gem install bundler --no-ri --no-rdoc
  - bundle install -j $(nproc) --path vendor

rspec:
  stage: test
  script:
    - bundle exec rspec
`,
  Rust: `${HEADER}image: rust:latest

test:cargo:
  stage: test
  script:
    - rustc --version && cargo --version
    - cargo test --verbose
`,
};
