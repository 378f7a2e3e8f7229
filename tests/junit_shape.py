#!/usr/bin/env python3
"""Checks that FILE has the shape of a JUnit XML report as CI test reporters read it (GitLab,
Jenkins, GitHub): <testsuites> of <testsuite> elements whose counts match their <testcase>
elements; each test case named, with at most one <failure>, <error> or <skipped>, a failure with
its message. Prints 'tests=T failures=F errors=E skipped=S' and exits 0, or names the first
problem and exits 1."""
import sys
import xml.etree.ElementTree as ET


def count(element, name):
    value = element.get(name)
    if value is None or not value.isdigit():
        raise ValueError(f"<{element.tag} name={element.get('name')!r}> {name}={value!r}: not a count")
    return int(value)


def seconds(element):
    value = element.get("time", "0")
    if float(value) < 0:
        raise ValueError(f"<{element.tag}> time={value!r} is negative")


def check_case(case):
    for key in ("name", "classname"):
        if not case.get(key):
            raise ValueError(f"<testcase> without {key}")
    seconds(case)
    outcome = [c for c in case if c.tag in ("failure", "error", "skipped")]
    if len(outcome) > 1:
        raise ValueError(f"<testcase name={case.get('name')!r}> has {len(outcome)} outcomes")
    if outcome and outcome[0].tag in ("failure", "error") and not outcome[0].get("message"):
        raise ValueError(f"<testcase name={case.get('name')!r}>: <{outcome[0].tag}> without a message")
    return outcome[0].tag if outcome else "passed"


def check_suite(suite):
    if suite.tag != "testsuite" or not suite.get("name"):
        raise ValueError(f"<{suite.tag}> where a named <testsuite> belongs")
    seconds(suite)
    tally = {"tests": 0, "failure": 0, "error": 0, "skipped": 0}
    for child in suite:
        if child.tag == "properties":
            if any(p.tag != "property" or p.get("name") is None or p.get("value") is None for p in child):
                raise ValueError("<properties> holds something other than <property name value>")
            continue
        if child.tag != "testcase":
            raise ValueError(f"<{child.tag}> inside <testsuite>")
        tally["tests"] += 1
        outcome = check_case(child)
        if outcome != "passed":
            tally[outcome] += 1
    for attribute, key in (("tests", "tests"), ("failures", "failure"), ("errors", "error"), ("skipped", "skipped")):
        if count(suite, attribute) != tally[key]:
            raise ValueError(f"<testsuite> {attribute}={suite.get(attribute)} but holds {tally[key]}")
    return tally


def main(path):
    root = ET.parse(path).getroot()
    if root.tag != "testsuites":
        raise ValueError(f"root <{root.tag}>, expected <testsuites>")
    total = {"tests": 0, "failure": 0, "error": 0, "skipped": 0}
    suites = list(root)
    if not suites:
        raise ValueError("<testsuites> is empty")
    for suite in suites:
        for key, value in check_suite(suite).items():
            total[key] += value
    for attribute, key in (("tests", "tests"), ("failures", "failure")):
        if root.get(attribute) is not None and count(root, attribute) != total[key]:
            raise ValueError(f"<testsuites> {attribute}={root.get(attribute)} but its suites hold {total[key]}")
    print(f"tests={total['tests']} failures={total['failure']} errors={total['error']} skipped={total['skipped']}")


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except (ValueError, ET.ParseError, OSError) as e:
        print(f"{sys.argv[1]}: not a JUnit report: {e}", file=sys.stderr)
        sys.exit(1)
