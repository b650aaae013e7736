"""Says hello under the name in its first argument (hostile text welcome: JSON
escapes such as \\u001b are decoded), then plays the first legal decision."""
import json
import sys

from _lib import answer, hello, requests

hello(json.loads('"' + sys.argv[1] + '"'))
for req in requests():
    answer(req)
