// The browser test's Uppy (tests/browser/uppy_test.py): .ci/run bundles this file with
// esbuild into target/uppy/uppy-bundle.js (one IIFE), which the test's app page serves.
import Uppy from '@uppy/core'
import XHRUpload from '@uppy/xhr-upload'
import Tus from '@uppy/tus'

globalThis.UppyLib = { Uppy, XHRUpload, Tus }
